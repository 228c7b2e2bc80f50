// What the CLI entry owns for the whole process: a stdout closed by its reader is a quiet exit 0, and
// SIGINT/SIGTERM at any moment of a command, its start included, is exit 1 with one sentence (never the
// shell's 130/143).
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.ts";
import { CLI_PATH, cliEnv, PROJECT_ROOT, runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator } from "../helpers/simSync.ts";

const startSim = useTestSimulator();
const SIGNAL_ON_LOAD = fileURLToPath(new URL("../helpers/signalOnLoad.mjs", import.meta.url));

/** Runs the CLI with stdout read by something that, like `head -2`, closes the pipe after two lines. */
function runIntoHead(args: readonly string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; signal: string | null; lines: string[]; stderr: string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, [CLI_PATH, ...args], {
        cwd: PROJECT_ROOT,
        env: cliEnv(env),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        if (stdout.split("\n").length > 2) child.stdout.destroy();
      });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      child.on("error", reject);
      child.on("close", (code, signal) =>
        resolve({ code, signal, lines: stdout.split("\n").slice(0, 2), stderr }),
      );
    },
  );
}

describe("a closed stdout", () => {
  // 100,000 generated rows are megabytes of output, far more than a pipe buffers, so the CLI is still
  // writing when the reader goes away; an empty migrated store is enough to run them against.
  const manyRows =
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 100000) " +
    "SELECT i, printf('%.60c', 'x') AS padding FROM n";

  it.each(["csv", "json", "table"])(
    "ends `sql --format %s | head -2` quietly with exit 0",
    async (format) => {
      const db = tempDbPath();
      openStore(db).close();
      const result = await runIntoHead(["sql", "--format", format, manyRows], { FLAGTRAIL_DB: db });
      expect(result.lines.length).toBe(2);
      expect(result.stderr).toBe("");
      expect(result.signal).toBeNull();
      expect(result.code).toBe(0);
    },
  );
});

describe("a closed stdout after a verdict", () => {
  it("keeps `check`'s exit 1: `check --format json | head -2` does not pass a failing control", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-process-"));
    const db = join(dir, "flagtrail.db");
    openStore(db).close();
    // An empty store fails each completeness control once; 300 of them print ~120 KB of JSON, more than
    // a pipe buffers, so the reader is gone before the output is written.
    const controls = Array.from({ length: 300 }, (_, i) => ({
      id: `c${i}`,
      kind: "completeness",
      severity: "high",
    }));
    const config = join(dir, "flagtrail.config.json");
    writeFileSync(config, JSON.stringify({ controls }));
    const result = await runIntoHead(["check", "--format", "json"], {
      FLAGTRAIL_DB: db,
      FLAGTRAIL_CONFIG: config,
    });
    expect(result.lines[0]).toBe("[");
    expect(result.stderr).toBe(
      "flagtrail: 300 unwaived findings at or above low severity (controls c0, c1, c2, c3, c4, c5, c6, c7 and 292 more).\n",
    );
    expect(result.code).toBe(1);
  });
});

describe("SIGTERM", () => {
  const syncArgs = ["--since", daysAgo(32), "--page-size", "10", "--concurrency", "1", "--quiet"];

  it.each([
    ["sync", /\/src\/sync\/runSync\.ts$/],
    ["daemon", /\/src\/daemon\/worker\.ts$/],
  ])("while %s's modules load exits 1 with one sentence", async (command, module) => {
    const sim = await startSim({ records: 100, days: 30 });
    const db = tempDbPath();
    const extra = command === "daemon" ? ["--once"] : [];
    const result = await runCli([command, ...syncArgs, ...extra], {
      env: simEnv(sim, db, { FLAGTRAIL_TEST_SIGNAL_ON_LOAD: module.source }),
      nodeArgs: ["--import", SIGNAL_ON_LOAD],
    });
    expect(result.signal).toBeNull();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^flagtrail: [^\n]*\n$/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  // The CLI's first module: the handlers of src/cli.ts are not installed yet (the bin holds the signal).
  it.each([
    ["sync", "SIGINT"],
    ["status", "SIGTERM"],
  ])("%s sent %s as the CLI starts loading exits 1 with one sentence", async (command, signal) => {
    const result = await runCli([command], {
      env: {
        FLAGTRAIL_DB: tempDbPath(),
        FLAGTRAIL_API_KEY: "console-early-signal",
        FLAGTRAIL_TEST_SIGNAL_ON_LOAD: /\/src\/cli\.ts$/.source,
        FLAGTRAIL_TEST_SIGNAL: signal,
      },
      nodeArgs: ["--import", SIGNAL_ON_LOAD],
    });
    expect(result.signal).toBeNull();
    expect(result.stderr).toBe(`flagtrail: stopped by ${signal}; anything already stored is kept.\n`);
    expect(result.code).toBe(1);
  });

  it("during a sync's first request exits 1 with one sentence, the run marked interrupted", async () => {
    const sim = await startSim({ records: 300, days: 30, faults: { latencyMs: 200 } });
    const db = tempDbPath();
    const requests = () => sim.control.counters().lastQueries.length;
    const result = await runCli(["sync", ...syncArgs], {
      env: simEnv(sim, db),
      onSpawn: (child) => {
        const poll = setInterval(() => {
          if (requests() === 0) return;
          clearInterval(poll);
          child.kill("SIGTERM");
        }, 10);
        child.on("close", () => clearInterval(poll));
      },
    });
    expect(result.signal).toBeNull();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^flagtrail: The sync was interrupted[^\n]*\n$/);
  });
});
