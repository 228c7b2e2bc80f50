// The CLI against a misbehaving simulator: head inserts while paging, a thousand records in one
// second, a clamped page size, 429 without Retry-After, a rejected key. The first sync under head inserts
// and the rejected key's are spawned (end to end); the other syncs run the CLI in this process.
import { describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import {
  compareWithSimulator,
  daysAgo,
  simEnv,
  tempDbPath,
  useTestSimulator,
  withDb,
} from "../helpers/simSync.ts";

const startSim = useTestSimulator();

describe("flagtrail sync under faults", () => {
  it("loses nothing when records are inserted at the head while paging", async () => {
    const sim = await startSim({
      records: 200,
      days: 10,
      faults: { headInsertRate: 1, headInsertCount: 3 },
    });
    const db = tempDbPath();
    const env = simEnv(sim, db);
    const before = sim.control.size();
    const first = await runCli(
      ["sync", "--since", daysAgo(12), "--page-size", "25", "--concurrency", "1", "--json"],
      {
        env,
      },
    );
    expect(first.code).toBe(0);
    expect(sim.control.counters().faults.headInsert).toBeGreaterThan(0);
    // Pages shifted under the reader: re-read records were deduplicated, none was skipped.
    expect(JSON.parse(first.stdout).duplicates).toBeGreaterThan(0);
    expect(
      withDb(db, (d) => d.prepare("SELECT count(*) FROM audit_logs").pluck().get()),
    ).toBeGreaterThanOrEqual(before);

    sim.control.setFaults({});
    const second = await runCliInProcess(["sync", "--page-size", "25", "--json"], { env });
    expect(second.code).toBe(0);
    expect(compareWithSimulator(sim, db)).toEqual({
      storeCount: sim.control.size(),
      distinct: sim.control.size(),
      simulatorCount: sim.control.size(),
      unknownToSimulator: [],
    });
  });

  it("pages a thousand records of one second across page boundaries, under a clamped page size", async () => {
    const sim = await startSim({ records: 50, days: 5, maxPageSize: 40 });
    const second = sim.control.now() - 3_600_000;
    sim.control.append(
      Array.from({ length: 1000 }, (_, i) => ({ at: second, name: `burst_${i}`, actionType: "gate_update" })),
    );
    const db = tempDbPath();
    const run = await runCliInProcess(["sync", "--since", daysAgo(7), "--page-size", "100", "--json"], {
      env: simEnv(sim, db),
    });
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ inserted: 1050, duplicates: 0 });
    expect(sim.control.counters().faults.clamp).toBeGreaterThan(0);
    expect(compareWithSimulator(sim, db)).toEqual({
      storeCount: 1050,
      distinct: 1050,
      simulatorCount: 1050,
      unknownToSimulator: [],
    });
    const burst = withDb(db, (d) =>
      d
        .prepare(
          "SELECT count(DISTINCT occurred_at) AS instants, count(*) AS n FROM audit_logs WHERE name LIKE 'burst_%'",
        )
        .get(),
    );
    expect(burst).toEqual({ instants: 1, n: 1000 });
  });

  it("backs off on 429 without Retry-After and finishes", async () => {
    const sim = await startSim({ records: 120, days: 5 });
    sim.control.setFaults({
      rateLimit: { windows: [{ limit: 100_000, windowMs: 1000 }], retryAfter: false },
    });
    sim.control.queueFaults(["rateLimit", "rateLimit", "rateLimit"]);
    const db = tempDbPath();
    const run = await runCliInProcess(["sync", "--since", daysAgo(6), "--json"], { env: simEnv(sim, db) });
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.throttled).toBe(3);
    expect(sim.control.counters().throttled).toBe(3);
    expect(compareWithSimulator(sim, db).storeCount).toBe(120);
    const row = withDb(db, (d) => d.prepare("SELECT outcome, throttled FROM sync_runs").get());
    expect(row).toEqual({ outcome: "ok", throttled: 3 });
  });

  it("exits 1 with the cause on a rejected key, never echoing it, and keeps what was stored", async () => {
    const sim = await startSim({ records: 60, days: 5 });
    const db = tempDbPath();
    const ok = await runCliInProcess(["sync", "--since", daysAgo(6), "--quiet"], { env: simEnv(sim, db) });
    expect(ok.code).toBe(0);
    const bad = await runCli(["sync", "--quiet"], {
      env: simEnv(sim, db, { FLAGTRAIL_API_KEY: "console-wrong-secret-key" }),
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/not an active console key/);
    expect(bad.stderr + bad.stdout).not.toContain("console-wrong-secret-key");
    expect(withDb(db, (d) => d.prepare("SELECT count(*) FROM audit_logs").pluck().get())).toBe(60);
    const runs = withDb(db, (d) => d.prepare("SELECT outcome, error FROM sync_runs ORDER BY id").all()) as {
      outcome: string;
      error: string;
    }[];
    expect(runs.map((r) => r.outcome)).toEqual(["ok", "failed"]);
    expect(runs[1]?.error).not.toContain("console-wrong-secret-key");
  });
});
