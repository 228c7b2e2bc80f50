// The real CLI against the simulator over 127.0.0.1: backfill, incremental, mutation, quarantine. The
// backfill is spawned (end to end); the other runs of the CLI are in this process.
import { describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import {
  auditQueries,
  compareWithSimulator,
  daysAgo,
  simEnv,
  tempDbPath,
  useTestSimulator,
  withDb,
} from "../helpers/simSync.ts";

const startSim = useTestSimulator();

describe("flagtrail sync against the simulator", () => {
  it("backfills more than 90 days, then an incremental run fetches only the new records", async () => {
    const sim = await startSim({ records: 800, days: 120 });
    const db = tempDbPath();
    const env = simEnv(sim, db);

    const first = await runCli(["sync", "--since", daysAgo(125), "--page-size", "50", "--json"], { env });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(summary).toMatchObject({ outcome: "ok", inserted: 800, mutations: 0, quarantined: 0 });
    expect(summary.coverageGaps).toEqual([]);
    expect(compareWithSimulator(sim, db)).toEqual({
      storeCount: 800,
      distinct: 800,
      simulatorCount: 800,
      unknownToSimulator: [],
    });
    // Records older than 90 days are there: the API's default window was not silently applied.
    const oldest = withDb(
      db,
      (d) => d.prepare("SELECT min(occurred_at) FROM audit_logs").pluck().get() as number,
    );
    expect(Date.now() - oldest).toBeGreaterThan(100 * 86_400_000);
    const checkpoint = withDb(db, (d) =>
      d.prepare("SELECT latest_id FROM checkpoints WHERE filter_key = 'all'").pluck().get(),
    );
    expect(checkpoint).toBeTypeOf("string");

    sim.control.resetCounters();
    const fresh = sim.control.append([
      { name: "new_gate", actionType: "gate_update" },
      { name: "new_gate", actionType: "gate_update" },
      { name: "new_config", actionType: "dynamic_config_update" },
    ]);
    const second = await runCliInProcess(["sync", "--page-size", "50", "--json"], { env });
    expect(second.code).toBe(0);
    const secondSummary = JSON.parse(second.stdout);
    expect(secondSummary).toMatchObject({ inserted: 3, mutations: 0 });
    expect(secondSummary.duplicates).toBe(secondSummary.fetched - 3);
    const pageQueries = auditQueries(sim).filter((q) => q.get("limit") === "50");
    // One latestID page for the new records; the lookback days (and the history checked before them)
    // are checked by one count request without latestID, not re-read.
    const withLatest = pageQueries.filter((q) => q.has("latestID"));
    expect(withLatest).toHaveLength(1);
    expect(withLatest[0]?.get("latestID")).toBe(checkpoint);
    expect(pageQueries.filter((q) => !q.has("latestID"))).toEqual([]);
    const counts = auditQueries(sim).filter((q) => q.get("limit") === "1");
    expect(counts).toHaveLength(1);
    expect(counts[0]?.has("latestID")).toBe(false);
    expect(secondSummary.requests).toBe(2);
    expect(withLatest[0]?.get("startDate")).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(withLatest[0]?.get("endDate")).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const newest = withDb(db, (d) =>
      d.prepare("SELECT latest_id FROM checkpoints WHERE filter_key = 'all'").pluck().get(),
    );
    expect(newest).toBe(fresh[2]?.id);
    expect(compareWithSimulator(sim, db).storeCount).toBe(803);
  });

  it("keeps the first version of a mutated record and quarantines malformed ones", async () => {
    const sim = await startSim({ records: 300, days: 20, faults: { malformedRate: 0.02 } });
    const db = tempDbPath();
    const env = simEnv(sim, db);
    const first = await runCliInProcess(["sync", "--since", daysAgo(25), "--json"], { env });
    expect(first.code).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(summary.quarantined).toBeGreaterThan(0);
    const issues = withDb(db, (d) => d.prepare("SELECT raw, issues FROM quarantine").all()) as {
      raw: string;
      issues: string;
    }[];
    expect(issues).toHaveLength(summary.quarantined);
    for (const row of issues) {
      expect(JSON.parse(row.issues).length).toBeGreaterThan(0);
      expect(sim.control.get(JSON.parse(row.raw).id)).toBeDefined();
    }
    // Malformed records are quarantined, valid ones stored: together they are the simulator's set.
    expect(compareWithSimulator(sim, db)).toMatchObject({
      storeCount: 300,
      distinct: 300,
      unknownToSimulator: [],
    });

    const victim = withDb(db, (d) =>
      d.prepare("SELECT id, change_log FROM audit_logs ORDER BY seq LIMIT 1").get(),
    ) as { id: string; change_log: string };
    sim.control.mutate(victim.id, { changeLog: "rewritten after the fact" });
    const again = await runCliInProcess(["sync", "--full", "--since", daysAgo(25), "--json"], { env });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ mutations: 1, inserted: 0 });
    const kept = withDb(db, (d) =>
      d.prepare("SELECT change_log FROM audit_logs WHERE id = ?").pluck().get(victim.id),
    );
    expect(kept).toBe(victim.change_log);
    const revision = withDb(db, (d) =>
      d.prepare("SELECT raw FROM audit_log_revisions WHERE audit_log_id = ?").pluck().get(victim.id),
    ) as string;
    expect(JSON.parse(revision).changeLog).toBe("rewritten after the fact");

    const status = await runCliInProcess(["status", "--json"], { env });
    expect(status.code).toBe(0);
    const parsed = JSON.parse(status.stdout);
    expect(parsed.mutated).toMatchObject({ records: 1, revisions: 1 });
    expect(parsed.quarantined.total).toBe(summary.quarantined);
    expect(parsed.runs.map((r: { outcome: string }) => r.outcome)).toEqual(["ok", "ok"]);
  });
});
