// What a sync says on stderr when stderr is a log, not a terminal (cron, CI): one line per retry, and a
// progress line at most every FLAGTRAIL_PROGRESS_SECONDS; --quiet says neither.
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator } from "../helpers/simSync.ts";

const startSim = useTestSimulator();

describe("flagtrail sync progress in a log", () => {
  it("prints a line per retry and progress lines, and nothing of either with --quiet", async () => {
    const sim = await startSim({ records: 600, days: 100, faults: { latencyMs: 40 } });
    const env = { ...simEnv(sim, tempDbPath()), FLAGTRAIL_PROGRESS_SECONDS: "0.2" };
    sim.control.queueFaults(["serverError", "serverError"]);
    const args = ["sync", "--since", daysAgo(105), "--page-size", "20", "--concurrency", "1"];
    const run = await runCli(args, { env });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split("\n");
    const retries = lines.filter((l) => l.startsWith("retry: GET /console/v1/audit_logs?"));
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatch(/HTTP 5\d\d.*; attempt 2 in \d+\.\d s$/);
    expect(
      lines.filter((l) => /^progress: windows \d+\/\d+, fetched \d+, new \d+$/.test(l)).length,
    ).toBeGreaterThan(0);
    expect(run.stderr).not.toContain(sim.settings.apiKey);

    sim.control.queueFaults(["serverError"]);
    const quiet = await runCli([...args, "--quiet", "--full"], {
      env: { ...env, FLAGTRAIL_DB: tempDbPath() },
    });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe("");
  });
});
