// A first backfill into an empty PostgreSQL store ends with ANALYZE of the tables it loaded (the report's
// plans need statistics before autovacuum gets round to them), and leaves no bulk-load mark behind. Real
// CLI against the simulator on 127.0.0.1; a database of its own (test/pg/cluster.ts).
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, useTestSimulator } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const startSim = useTestSimulator();

type TableStats = { relname: string; analyzed: boolean };

/** audit_logs' and rule_changes' statistics as the cluster reports them. */
async function tableStats(url: string): Promise<TableStats[]> {
  return queryOnce<TableStats>(
    url,
    `SELECT relname, last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relname IN ('audit_logs', 'rule_changes') ORDER BY relname`,
  );
}

describe("a first sync into an empty PostgreSQL store", () => {
  it("analyzes the tables it loaded before it exits", async () => {
    const sim = await startSim({ records: 300, days: 60 });
    const url = await freshDatabase("bulk");
    // Three 30-day windows: a backfill of more than one window is a bulk load.
    const sync = await runCli(["sync", "--no-entities", "--json", "--since", daysAgo(65)], {
      env: simEnv(sim, url),
    });
    expect(sync.stderr).not.toMatch(/error|cannot/i);
    expect(sync.code).toBe(0);
    expect(JSON.parse(sync.stdout).inserted).toBe(300);
    // What ANALYZE writes is there at once (pg_class, pg_statistic): the row count (-1 before any
    // ANALYZE or VACUUM) and column statistics.
    const [table] = await queryOnce<{ reltuples: number; columns: string }>(
      url,
      `SELECT reltuples, (SELECT count(*) FROM pg_stats WHERE tablename = 'audit_logs')::text AS columns
       FROM pg_class WHERE relname = 'audit_logs'`,
    );
    expect(table?.reltuples).toBe(300);
    expect(Number(table?.columns)).toBeGreaterThan(0);
    // last_analyze is set by a manual ANALYZE only (autovacuum sets last_autoanalyze): the sync's. The
    // CLI's sessions hand their counters to the cluster as they exit, a moment after the CLI has: wait.
    // (n_mod_since_analyze is no witness: a pool session's insert counts may arrive after the ANALYZE.)
    let stats = await tableStats(url);
    for (let waited = 0; waited < 5000 && !stats.every((s) => s.analyzed); waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      stats = await tableStats(url);
    }
    expect(stats).toEqual([
      { relname: "audit_logs", analyzed: true },
      { relname: "rule_changes", analyzed: true },
    ]);
    expect(await queryOnce(url, "SELECT key FROM meta WHERE key = 'bulk_load'")).toEqual([]);
  });
});
