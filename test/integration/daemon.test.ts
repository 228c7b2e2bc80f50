// The scheduled worker end to end: real CLI processes, a real simulator on 127.0.0.1, one SQLite file.
// The daemons signalled are processes of their own; the checks after them, the --once runs (with a
// report too) and the other runs of the CLI are in this process.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { previousPeriod, todayIn } from "../../src/daemon/periods.ts";
import { logEvents, requestsServed, spawnDaemon, waitUntil } from "../helpers/daemonProcess.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import {
  compareWithSimulator,
  daysAgo,
  simEnv,
  tempDbPath,
  useTestSimulator,
  withDb,
} from "../helpers/simSync.ts";

const startSim = useTestSimulator();

interface RunRow {
  outcome: string;
  pid: number;
}

function runs(db: string): RunRow[] {
  try {
    return withDb(db, (d) => d.prepare("SELECT outcome, pid FROM sync_runs ORDER BY id").all() as RunRow[]);
  } catch {
    return []; // not created yet
  }
}

describe("flagtrail daemon", () => {
  it("runs on a per-second schedule, keeps a second daemon idle, and stops cleanly on SIGTERM mid-sync", async () => {
    // Latency makes one sync last a few seconds, so SIGTERM lands in the middle of one.
    const sim = await startSim({ records: 800, days: 100, faults: { latencyMs: 60 } });
    const db = tempDbPath();
    const env = simEnv(sim, db);
    const args = [
      "--cron",
      "* * * * * *",
      "--since",
      daysAgo(105),
      "--page-size",
      "20",
      "--concurrency",
      "1",
    ];

    const first = spawnDaemon(args, env);
    await waitUntil(() => runs(db).some((r) => r.outcome === "running"), "the first sync to start");
    const second = spawnDaemon(args, env);
    // The second daemon ticks every second too, but finds the lease held.
    await waitUntil(
      () => second.stderrSoFar().split('"tick.skipped"').length > 3,
      "the second daemon to skip ticks",
    );
    const firstPid = first.child().pid;
    expect(runs(db).every((r) => r.pid === firstPid)).toBe(true);

    // The idle one stops first, so that it cannot take the lease between the two signals.
    second.child().kill("SIGTERM");
    const secondResult = await second.done;
    expect(secondResult.code, secondResult.stderr).toBe(0);
    // SIGTERM while a sync is running: the page transaction commits, the run is marked interrupted.
    // Every request from now on is held 2 s by the server: once one has arrived, a cycle is waiting on
    // it, so the signal lands mid-cycle rather than between two (later cycles are short nightly ones).
    sim.control.setFaults({ latencyMs: 2000 });
    const before = requestsServed(sim);
    await waitUntil(() => requestsServed(sim) > before, "a request held by the server");
    first.child().kill("SIGTERM");
    const firstResult = await first.done;
    expect(firstResult.code).toBe(0);
    sim.control.setFaults({ latencyMs: 0 });

    const firstEvents = logEvents(firstResult.stderr);
    expect(firstEvents.map((e) => e.event)).toEqual(
      expect.arrayContaining(["daemon.start", "lease.acquired", "cycle.start", "daemon.stop"]),
    );
    // SIGTERM, then the running cycle ends (interrupted), then the worker stops.
    const order = firstEvents.map((e) => e.event);
    expect(order.indexOf("signal")).toBeLessThan(order.lastIndexOf("cycle.interrupted"));
    expect(order.lastIndexOf("cycle.interrupted")).toBeGreaterThan(order.lastIndexOf("cycle.end"));
    expect(order.at(-1)).toBe("daemon.stop");
    const secondEvents = logEvents(secondResult.stderr);
    expect(secondEvents.filter((e) => e.event === "tick.skipped").length).toBeGreaterThanOrEqual(2);
    expect(secondEvents.some((e) => e.event === "cycle.start")).toBe(false);
    expect(firstResult.stderr + secondResult.stderr).not.toContain(sim.settings.apiKey);

    const interrupted = runs(db).filter((r) => r.outcome === "interrupted");
    expect(interrupted.length).toBeGreaterThanOrEqual(1);
    expect(runs(db).some((r) => r.outcome === "running")).toBe(false);
    expect(withDb(db, (d) => d.prepare("SELECT count(*) FROM leases").pluck().get())).toBe(0);

    // The store is consistent: the chain verifies, and one more cycle completes to exact set equality.
    const verify = await runCliInProcess(["verify", "--db", db], { env });
    expect(verify.code).toBe(0);
    const once = await runCliInProcess(["daemon", "--once", ...args.slice(2)], { env });
    expect(once.code).toBe(0);
    const comparison = compareWithSimulator(sim, db);
    expect(comparison.unknownToSimulator).toEqual([]);
    expect(comparison.distinct).toBe(comparison.storeCount);
    expect(comparison.storeCount).toBe(comparison.simulatorCount);
  });

  it("--once syncs, writes the previous month's report and records the outcome for status", async () => {
    const sim = await startSim({ records: 600, days: 100 });
    const db = tempDbPath();
    const out = join(dirname(db), "reports");
    const env = simEnv(sim, db);
    const result = await runCliInProcess(
      [
        "daemon",
        "--once",
        "--since",
        daysAgo(105),
        "--report",
        "monthly",
        "--tz",
        "Europe/Berlin",
        "--out",
        out,
        "--format",
        "csv,md,html",
        "--json",
      ],
      { env },
    );
    expect(result.code, result.stderr).toBe(0);
    const end = logEvents(result.stderr).find((e) => e.event === "cycle.end") as {
      report?: { from: string; to: string };
    };
    const { from, to } = previousPeriod("monthly", todayIn("Europe/Berlin"));
    expect(end.report).toMatchObject({ from, to });
    expect(readdirSync(out).sort()).toEqual(
      [
        `compliance_${from}_${to}_Europe-Berlin.md`,
        // --format as report's (issue 26)
        `compliance_${from}_${to}_Europe-Berlin.html`,
        `config-edits_${from}_${to}_Europe-Berlin.csv`,
        `experiment-state-changes_${from}_${to}_Europe-Berlin.csv`,
        `manifest_${from}_${to}_Europe-Berlin.json`,
        `unreviewed-changes_${from}_${to}_Europe-Berlin.csv`,
      ].sort(),
    );
    const last = withDb(
      db,
      (d) => d.prepare("SELECT value FROM meta WHERE key = 'daemon.last_cycle'").pluck().get() as string,
    );
    expect(JSON.parse(last)).toMatchObject({ ok: true, outcome: "ok" });
    const status = await runCliInProcess(["status", "--db", db], { env });
    expect(status.stdout).toContain(`Daemon's last cycle:`);
    expect(status.stdout).toContain(`ok, report ${from} .. ${to}`);
  });

  it("--once stopped by SIGTERM mid-cycle exits 1 and is recorded as interrupted, not ok", async () => {
    // Every request is held 1 s by the server: once one has arrived, the cycle's sync is waiting on it.
    const sim = await startSim({ records: 600, days: 100, faults: { latencyMs: 1000 } });
    const db = tempDbPath();
    const out = join(dirname(db), "reports");
    const env = simEnv(sim, db);
    const once = spawnDaemon(["--once", "--since", daysAgo(105), "--report", "daily", "--out", out], env);
    await waitUntil(() => requestsServed(sim) > 0, "a request of the cycle held by the server");
    once.child().kill("SIGTERM");
    const result = await once.done;
    expect(result.code).toBe(1);
    const sentences = result.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("{"));
    expect(sentences).toEqual([
      "flagtrail: The cycle was interrupted; everything fetched so far is stored. Run it again to resume.",
    ]);
    const events = logEvents(result.stderr).map((e) => e.event);
    expect(events).toContain("cycle.interrupted");
    expect(events).not.toContain("cycle.end");
    // No report was written, and status shows the cycle as interrupted.
    expect(() => readdirSync(out)).toThrow(/ENOENT/);
    expect(runs(db).map((r) => r.outcome)).toEqual(["interrupted"]);
    const last = withDb(
      db,
      (d) => d.prepare("SELECT value FROM meta WHERE key = 'daemon.last_cycle'").pluck().get() as string,
    );
    expect(JSON.parse(last)).toMatchObject({ ok: false, interrupted: true, outcome: "interrupted" });
    const status = await runCliInProcess(["status", "--db", db], { env });
    expect(status.stdout).toMatch(/Daemon's last cycle: \S+ interrupted\n/);
  });

  it("--since starts the history: once a checkpoint exists, a cycle continues from it", async () => {
    const sim = await startSim({ records: 600, days: 100 });
    const db = tempDbPath();
    const env = simEnv(sim, db);
    const cycle = async () => {
      const result = await runCliInProcess(["daemon", "--once", "--since", daysAgo(105), "--json"], { env });
      expect(result.code, result.stderr).toBe(0);
      return logEvents(result.stderr).find((e) => e.event === "cycle.end") as unknown as {
        fetched: number;
        inserted: number;
        requests: number;
      };
    };
    const first = await cycle();
    expect(first.inserted).toBe(600);
    const second = await cycle();
    // The nightly range (lookback days up to the checkpoint), not the 105 days again.
    expect(second.inserted).toBe(0);
    expect(second.fetched).toBeLessThan(first.fetched / 4);
    expect(second.requests).toBeLessThan(first.requests);
  });

  it("rejects a bad schedule with exit 2 and shows its options in --help", async () => {
    const bad = await runCliInProcess(["daemon", "--cron", "every night", "--api-key", "console-x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'flagtrail: --cron: The schedule "every night" is not a valid cron expression (5 or 6 fields).\n',
    );
    const help = await runCliInProcess(["daemon", "--help"]);
    expect(help.code).toBe(0);
    for (const flag of ["--cron", "--tz", "--report", "--once", "--lease-ttl", "--since", "--db"]) {
      expect(help.stdout).toContain(flag);
    }
  });
});
