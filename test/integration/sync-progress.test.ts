// What a sync says on stderr when stderr is a log, not a terminal (cron, CI): one line per retry, and a
// progress line at most every FLAGTRAIL_PROGRESS_SECONDS; --quiet says neither. The syncs whose output is
// read are spawned (end to end); the other runs of the CLI are in this process.
import { describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
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
    // Each line is timestamped: a log read later says when the run was where.
    const stamp = "\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z ";
    const retries = lines.filter((l) => new RegExp(`^${stamp}retry: GET /console/v1/audit_logs\\?`).test(l));
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatch(/HTTP 5\d\d.*; attempt 2 in \d+\.\d s$/);
    expect(
      lines.filter((l) => new RegExp(`^${stamp}progress: windows \\d+/\\d+, fetched \\d+, new \\d+$`).test(l))
        .length,
    ).toBeGreaterThan(0);
    expect(run.stderr).not.toContain(sim.settings.apiKey);

    sim.control.queueFaults(["serverError"]);
    const quiet = await runCliInProcess([...args, "--quiet", "--full"], {
      env: { ...env, FLAGTRAIL_DB: tempDbPath() },
    });
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe("");
  });
});

describe("flagtrail status while a sync runs", () => {
  it("says the sync is running, since when and by which pid, and its plan is in progress", async () => {
    const sim = await startSim({ records: 600, days: 60, faults: { latencyMs: 100 } });
    const db = tempDbPath();
    const env = simEnv(sim, db);
    let pid: number | undefined;
    const running = runCli(
      ["sync", "--since", daysAgo(62), "--page-size", "20", "--concurrency", "1", "--quiet"],
      {
        env,
        onSpawn: (child) => {
          pid = child.pid;
        },
      },
    );
    let seen = "";
    // Until status shows the plan too: the run's row is written a moment before its plan, and a status
    // read in between (seen under load) shows a running sync with no plan yet.
    const planShown = () => seen.includes("Sync running since") && seen.includes("Sync in progress");
    for (let waited = 0; waited < 20_000 && !planShown(); waited += 200) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const status = await runCliInProcess(["status", "--db", db], { env });
      if (status.code === 0) seen = status.stdout;
    }
    expect(seen).toMatch(
      new RegExp(`Sync running since \\d{4}-\\d{2}-\\d{2}T[^:]+:\\d{2}:\\d{2}.*pid ${pid}`),
    );
    expect(seen).toMatch(/Sync in progress for all /);
    expect(seen).not.toMatch(/Interrupted sync/);
    // Seen while running: the rest of its pages need not be slow any more.
    sim.control.setFaults({});
    expect((await running).code).toBe(0);
  });
});
