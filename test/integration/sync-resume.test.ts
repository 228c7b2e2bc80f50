// Crash safety and exclusion: kill -9 in the middle of a sync, then resume to exact set equality;
// a second sync while one runs is refused; SIGTERM stops a sync cleanly.
import type { ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import { CHAIN_GENESIS, chainLink } from "../../src/hash.ts";
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

function count(db: string, sql: string): number {
  try {
    return withDb(db, (d) => d.prepare(sql).pluck().get() as number);
  } catch {
    return 0; // not created or not migrated yet
  }
}

/** Resolves once `ready()` holds, polling every 50 ms (rejects after 20 s). */
async function waitUntil(ready: () => boolean): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 50) {
    if (ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("condition not reached in time");
}

describe("flagtrail sync crash safety", () => {
  it("resumes after kill -9 without re-reading finished windows, ending in exact set equality", async () => {
    // Slow enough that the kill lands between batch commits (a batch holds at most 2 s of pages).
    const sim = await startSim({ records: 1200, days: 100, faults: { latencyMs: 100 } });
    const db = tempDbPath();
    const env = simEnv(sim, db);
    const args = ["sync", "--since", daysAgo(105), "--page-size", "20", "--concurrency", "1", "--quiet"];
    let child: ChildProcess | undefined;
    const killed = runCli(args, {
      env,
      onSpawn: (c) => {
        child = c;
      },
    });
    await waitUntil(() => count(db, "SELECT count(*) FROM sync_windows WHERE status = 'done'") >= 2);
    child!.kill("SIGKILL");
    const result = await killed;
    expect(result.signal).toBe("SIGKILL");
    const partial = count(db, "SELECT count(*) FROM audit_logs");
    expect(partial).toBeLessThan(1200);
    const doneWindows = withDb(db, (d) =>
      d.prepare("SELECT start_date, end_date FROM sync_windows WHERE status = 'done'").all(),
    ) as { start_date: string; end_date: string }[];
    expect(doneWindows.length).toBeGreaterThan(0);

    sim.control.setFaults({});
    // A request the killed process sent just before dying is still being answered (latency): let it
    // finish before counting.
    await new Promise((resolve) => setTimeout(resolve, 300));
    sim.control.resetCounters();
    // Without coverage probes every request of the run is a page request, all within lastQueries.
    const resumed = await runCliInProcess(["sync", "--no-coverage", "--json"], { env });
    expect(resumed.code).toBe(0);
    const summary = JSON.parse(resumed.stdout);
    expect(summary.resumed).toBe(true);
    expect(summary.inserted).toBe(1200 - partial);
    expect(compareWithSimulator(sim, db)).toEqual({
      storeCount: 1200,
      distinct: 1200,
      simulatorCount: 1200,
      unknownToSimulator: [],
    });
    // No finished window's first page was requested again.
    const counters = sim.control.counters();
    const queries = counters.lastQueries.map((q) => new URLSearchParams(q));
    // The entity reads that follow the audit log are counted apart (lastQueries holds audit queries only).
    expect(queries.length).toBe(summary.requests - summary.entities.requests);
    expect(queries.length).toBeLessThan(50);
    for (const w of doneWindows) {
      const again = queries.filter(
        (q) =>
          q.get("startDate") === w.start_date && q.get("endDate") === w.end_date && q.get("page") === "1",
      );
      expect(again).toEqual([]);
    }
    // seq is gapless and the hash chain verifies end to end.
    const rows = withDb(db, (d) =>
      d.prepare("SELECT seq, record_hash, chain_hash FROM audit_logs ORDER BY seq").all(),
    ) as {
      seq: number;
      record_hash: string;
      chain_hash: string;
    }[];
    let link = CHAIN_GENESIS;
    // One expect over all rows (two per row were thousands of expect calls).
    const walked = rows.map((row, i) => {
      link = chainLink(link, row.record_hash);
      return { seq: i + 1, chain_hash: link };
    });
    expect(rows.map((row) => ({ seq: row.seq, chain_hash: row.chain_hash }))).toEqual(walked);
    const outcomes = withDb(db, (d) => d.prepare("SELECT outcome FROM sync_runs ORDER BY id").pluck().all());
    expect(outcomes).toEqual(["interrupted", "ok"]);
  });

  it("refuses a second sync while one runs, and SIGTERM stops the first cleanly", async () => {
    const sim = await startSim({ records: 600, days: 30, faults: { latencyMs: 100 } });
    const db = tempDbPath();
    const env = simEnv(sim, db);
    let child: ChildProcess | undefined;
    const first = runCli(
      ["sync", "--since", daysAgo(32), "--page-size", "10", "--concurrency", "1", "--quiet"],
      {
        env,
        onSpawn: (c) => {
          child = c;
        },
      },
    );
    await waitUntil(() => count(db, "SELECT count(*) FROM audit_logs") > 0);

    const second = await runCliInProcess(["sync", "--quiet"], { env });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/Another sync is running on this database/);
    expect(count(db, "SELECT count(*) FROM sync_runs")).toBe(1);

    child!.kill("SIGTERM");
    const stopped = await first;
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/interrupted/);
    const run = withDb(db, (d) => d.prepare("SELECT outcome, inserted FROM sync_runs").get()) as {
      outcome: string;
      inserted: number;
    };
    expect(run.outcome).toBe("interrupted");
    expect(run.inserted).toBe(count(db, "SELECT count(*) FROM audit_logs"));
    expect(count(db, "SELECT count(*) FROM leases")).toBe(0);
  });
});
