// `daemon --quiet` and `--json` do what their help says (issue 9): --quiet keeps warnings and errors
// only; --json writes JSON lines on a terminal too (a pseudo-terminal through script(1)). The plain
// --once and the terminal runs are spawned; the quiet one and the logged sync run in this process.
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { logEvents } from "../helpers/daemonProcess.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { CLI_PATH, cliEnv, PROJECT_ROOT, runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator } from "../helpers/simSync.ts";

const startSim = useTestSimulator();

// A server that refuses connections: the cycle fails at once, after logging its start.
const env = {
  FLAGTRAIL_API_KEY: "console-test-key",
  FLAGTRAIL_BASE_URL: "http://127.0.0.1:9",
  FLAGTRAIL_RETRY_MAX_ATTEMPTS: "1",
};

const levels = (stderr: string) =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => (JSON.parse(l) as { level: string }).level);

describe("daemon output flags", () => {
  it("--quiet logs warnings and errors only", async () => {
    const [plain, quiet] = await Promise.all([
      runCli(["daemon", "--once", "--db", tempDbPath()], { env }),
      runCliInProcess(["daemon", "--once", "--db", tempDbPath(), "--quiet"], { env }),
    ]);
    expect([plain.code, quiet.code]).toEqual([1, 1]);
    expect(levels(plain.stderr)).toEqual(["info", "info", "error"]);
    expect(levels(quiet.stderr)).toEqual(["error"]);
    expect(quiet.stderr).not.toContain("console-test-key");
  });

  it.runIf(existsSync("/usr/bin/script"))("--json writes JSON lines on a terminal, text without it", () => {
    const onTerminal = (...flags: string[]) => {
      const command = [process.execPath, CLI_PATH, "daemon", "--once", "--db", tempDbPath(), ...flags].join(
        " ",
      );
      const result = spawnSync("/usr/bin/script", ["-qec", command, "/dev/null"], {
        cwd: PROJECT_ROOT,
        env: cliEnv(env),
        encoding: "utf8",
      });
      return result.stdout.split(/\r?\n/).filter((l) => / (info|error) |"level"/.test(l));
    };
    const json = onTerminal("--json");
    const text = onTerminal();
    expect(json.length).toBeGreaterThan(0);
    for (const line of json) expect(() => JSON.parse(line)).not.toThrow();
    expect(text[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\S+ info {2}lease\.acquired$/);
  });
});

describe("daemon --quiet and a cycle that needs a look", () => {
  it("logs coverage gaps and a failed sink as one warning, without the sink's token", async () => {
    const sim = await startSim({ records: 100, days: 10 });
    // A server that counts 500 more than it serves: coverage reports gaps, the sync still ends ok.
    sim.control.setFaults({ lyingTotal: 500 });
    const db = tempDbPath();
    const config = join(dirname(db), "flagtrail.config.json");
    // A SIEM sink nobody listens on (port 9, discard): its delivery fails without a retry.
    const sink = { name: "splunk", kind: "splunk-hec", url: "http://127.0.0.1:9", tokenEnv: "HEC_TOKEN" };
    writeFileSync(config, JSON.stringify({ sinks: [{ ...sink, retries: 0, backoffSeconds: 0 }] }));
    const env = simEnv(sim, db, { FLAGTRAIL_CONFIG: config, HEC_TOKEN: "hec-token-quiet-5c1d" });
    const result = await runCliInProcess(["daemon", "--once", "--quiet", "--since", daysAgo(5)], { env });
    expect(result.code, result.stderr).toBe(0);
    const warnings = logEvents(result.stderr).filter((e) => e.event === "cycle.warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: "warn", sinksFailed: [{ sink: "splunk" }] });
    expect(warnings[0]?.gaps).toBeGreaterThan(0);
    expect(result.stderr).not.toContain("hec-token-quiet-5c1d");
    expect(result.stderr).not.toContain(sim.settings.apiKey);
  });
});

describe("daemon log of a cycle's sync", () => {
  it("logs progress, every window, each entity pass and a retry, each with a timestamp", async () => {
    const sim = await startSim({ records: 600, days: 100 });
    sim.control.queueFaults(["serverError"]);
    const env = { ...simEnv(sim, tempDbPath()), FLAGTRAIL_PROGRESS_SECONDS: "0" };
    const args = ["daemon", "--once", "--since", daysAgo(105), "--page-size", "50", "--concurrency", "1"];
    const result = await runCliInProcess(args, { env });
    expect(result.code, result.stderr).toBe(0);
    const events = logEvents(result.stderr);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("lease.acquired");
    const windows = events.filter((e) => e.event === "sync.window");
    const total = windows[0]?.total as number;
    expect(total).toBeGreaterThan(1);
    expect(windows.map((w) => w.done)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const progress = events.filter((e) => e.event === "sync.progress");
    expect(progress.length).toBeGreaterThan(2);
    expect(progress.some((p) => (p.fetched as number) > 0)).toBe(true);
    expect(events.filter((e) => e.event === "sync.entities").map((e) => e.pass)).toEqual([
      "configs",
      "layers",
      "events",
    ]);
    const retries = events.filter((e) => e.event === "sync.retry");
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({
      level: "warn",
      attempt: 2,
      reason: expect.stringMatching(/HTTP 5\d\d/),
    });
    for (const e of events) expect(String(e.time)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // The events come between the cycle's start and end.
    expect(names.indexOf("cycle.start")).toBeLessThan(names.indexOf("sync.window"));
    expect(names.lastIndexOf("sync.progress")).toBeLessThan(names.indexOf("cycle.end"));
    expect(result.stderr).not.toContain(sim.settings.apiKey);
  });
});
