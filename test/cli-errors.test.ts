// Failures a user meets at the edges become one sentence, never a stack trace (issue 9): a busy port
// for the simulator, a report directory the user may not create.
import { once } from "node:events";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess } from "./helpers/inProcessCli.ts";
import { runCli } from "./helpers/runCli.ts";
import { buildScenarioStore } from "./report/scenario.ts";

describe("one sentence, no stack trace", () => {
  it("simulate on a busy port", async () => {
    const holder = createServer().listen(0, "127.0.0.1");
    await once(holder, "listening");
    const { port } = holder.address() as { port: number };
    try {
      const result = await runCli(["simulate", "--port", String(port)]);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `flagtrail: Cannot listen on 127.0.0.1:${port} (EADDRINUSE): another process uses that port; choose another --port, or 0 for any free one.\n`,
      );
    } finally {
      holder.close();
    }
  });

  it.runIf(process.platform === "linux")(
    "report --out where no directory may be created (sysfs)",
    async () => {
      const dbPath = join(mkdtempSync(join(tmpdir(), "flagtrail-out-")), "store.db");
      buildScenarioStore(dbPath).close();
      // In this process (the /proc case below is spawned: there a hang must not hold the worker).
      const result = await runCliInProcess([
        "report",
        "--from",
        "2024-01-01",
        "--to",
        "2024-01-02",
        "--db",
        dbPath,
        "--out",
        "/sys/flagtrail-reports",
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^flagtrail: Cannot create the report directory \/sys\/flagtrail-reports \((EACCES|EPERM|EROFS)\): (no permission to write there|the file system is read-only)\.\n$/,
      );
    },
  );

  it.runIf(process.platform === "linux")(
    "report --out under /proc: one sentence at once (Node's recursive mkdir loops there forever)",
    async () => {
      const dbPath = join(mkdtempSync(join(tmpdir(), "flagtrail-out-")), "store.db");
      buildScenarioStore(dbPath).close();
      const started = Date.now();
      const result = await runCli(
        ["report", "--from", "2024-01-01", "--to", "2024-01-02", "--db", dbPath, "--out", "/proc/rep/x"],
        { timeoutMs: 20_000 },
      );
      expect(result.signal).toBeNull();
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        "flagtrail: Cannot create the report directory /proc/rep/x (ENOENT): the file system refused it.\n",
      );
      expect(Date.now() - started).toBeLessThan(20_000);
    },
  );
});

describe("an error flagtrail did not foresee", () => {
  it("is one sentence with no stack, unless FLAGTRAIL_DEBUG=1 asks for it", async () => {
    const { exitCodeFor } = await import("../src/cli.ts");
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const bug = new TypeError("store.close is not a function\n    at somewhere (file.ts:1:1)");
      expect(exitCodeFor(bug)).toBe(1);
      process.env.FLAGTRAIL_DEBUG = "1";
      expect(exitCodeFor(bug)).toBe(1);
    } finally {
      delete process.env.FLAGTRAIL_DEBUG;
      process.stderr.write = original;
    }
    expect(written[0]).toBe(
      "flagtrail: unexpected error: store.close is not a function (FLAGTRAIL_DEBUG=1 shows where it happened).\n",
    );
    expect(written[1]).toMatch(
      /^flagtrail: unexpected error: .*\nTypeError: store\.close is not a function\n\s+at /,
    );
  });
});

describe("a reset socket", () => {
  it("is a failure unless it is stdout that closed (a database connection reset mid-write is not `| head`)", async () => {
    const { exitCodeFor } = await import("../src/cli.ts");
    const reset = Object.assign(new Error("write ECONNRESET"), { code: "ECONNRESET", syscall: "write" });
    const original = process.stderr.write.bind(process.stderr);
    const written: string[] = [];
    process.stderr.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(process.stdout.destroyed).toBe(false);
      expect(exitCodeFor(reset)).toBe(1);
    } finally {
      process.stderr.write = original;
    }
    expect(written).toEqual([
      "flagtrail: unexpected error: write ECONNRESET (FLAGTRAIL_DEBUG=1 shows where it happened).\n",
    ]);
  });
});

describe("check without a config after `npm run demo`", () => {
  it("names the demo's config file for the demo's store, as status and report name its --db", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-check-demo-"));
    const plain =
      "flagtrail: No config file: check reads its controls from flagtrail.config.json (or --config, FLAGTRAIL_CONFIG)";
    const bare = await runCliInProcess(["check", "--db", "./flagtrail-demo.db"], { cwd: dir });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toBe(`${plain}.\n`);
    // What the demo leaves in the directory it ran in: its store and, beside its reports, its controls.
    writeFileSync(join(dir, "flagtrail-demo.db"), "");
    mkdirSync(join(dir, "reports"));
    writeFileSync(join(dir, "reports", "flagtrail-demo.config.json"), '{"controls": []}');
    const hint = `${plain}, or give --config reports/flagtrail-demo.config.json to check the demo's controls.\n`;
    for (const args of [["--db", "./flagtrail-demo.db"], ["--db", join(dir, "flagtrail-demo.db")], []]) {
      const afterDemo = await runCliInProcess(["check", ...args], { cwd: dir });
      expect(afterDemo.code).toBe(2);
      expect(afterDemo.stderr).toBe(hint);
    }
    // Another store named on purpose is not second-guessed.
    const other = await runCliInProcess(["check", "--db", "./other.db"], { cwd: dir });
    expect(other.stderr).toBe(`${plain}.\n`);
  });
});
