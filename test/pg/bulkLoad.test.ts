// A first backfill into an empty PostgreSQL store loads without the secondary indexes, builds the same
// ones after, and ends with ANALYZE of the tables it loaded (the report's plans need statistics before
// autovacuum gets round to them), leaving no bulk-load mark behind. A reader holding the tables makes it
// keep its indexes. Real CLI against the simulator on 127.0.0.1, or the store's functions in process; a
// database of its own per test (test/pg/cluster.ts).
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { beginBulkLoad, finishBulkLoad, openStore, type Store } from "../../src/store/syncStore.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, useTestSimulator } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

type IndexRow = { name: string; def: string };

/** Every index of the store's tables, by name, with its definition. */
async function indexes(url: string): Promise<IndexRow[]> {
  return queryOnce<IndexRow>(
    url,
    "SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname",
  );
}

/** The indexes a freshly migrated store has. */
async function migratedIndexes(): Promise<IndexRow[]> {
  const url = await freshDatabase("bulk_ref");
  await (await openStore(url)).close();
  return indexes(url);
}

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

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
    // The indexes set aside for the load are back, as the migrations made them.
    expect(await indexes(url)).toEqual(await migratedIndexes());
  });

  it("sets the secondary indexes aside for the load and builds the same ones after", async () => {
    const url = await freshDatabase("bulk_idx");
    store = await openStore(url);
    const before = await indexes(url);
    expect(await beginBulkLoad(store)).toBe(true);
    // Primary keys and seq's uniqueness stay (dedupe and the chain); the full-text index goes too.
    const during = (await indexes(url)).map((i) => i.name);
    expect(during).toContain("audit_logs_pkey");
    expect(during).toContain("audit_logs_seq_idx");
    expect(during).not.toContain("audit_logs_fts_idx");
    expect(during).not.toContain("audit_logs_occurred_at_idx");
    expect(during).not.toContain("rule_changes_audit_log_id_idx");
    const [mark] = await queryOnce<{ value: string }>(url, "SELECT value FROM meta WHERE key = 'bulk_load'");
    const setAside = (JSON.parse(mark?.value ?? "[]") as { name: string }[]).map((i) => i.name);
    expect([...during, ...setAside].sort()).toEqual(before.map((i) => i.name).sort());
    expect(await finishBulkLoad(store)).toBe(true);
    expect(await indexes(url)).toEqual(before);
    expect(await queryOnce(url, "SELECT key FROM meta WHERE key = 'bulk_load'")).toEqual([]);
  });

  it("keeps its indexes when a reader holds the table, instead of waiting for it", async () => {
    const url = await freshDatabase("bulk_reader");
    store = await openStore(url);
    const before = await indexes(url);
    const reader = new pg.Client({ connectionString: url });
    await reader.connect();
    try {
      await reader.query("BEGIN");
      await reader.query("SELECT count(*) FROM audit_logs");
      // Still a load (its end analyzes), with nothing set aside; the reader's transaction goes on.
      expect(await beginBulkLoad(store)).toBe(true);
      expect(await queryOnce(url, "SELECT value FROM meta WHERE key = 'bulk_load'")).toEqual([
        { value: "[]" },
      ]);
      expect(await indexes(url)).toEqual(before);
      expect((await reader.query("SELECT count(*)::int AS n FROM audit_logs")).rows).toEqual([{ n: 0 }]);
      await reader.query("COMMIT");
    } finally {
      await reader.end();
    }
    expect(await finishBulkLoad(store)).toBe(true);
    expect(await indexes(url)).toEqual(before);
  });

  it("keeps its indexes when the role does not own the tables", async () => {
    const url = await freshDatabase("bulk_role");
    await (await openStore(url)).close();
    const before = await indexes(url);
    // A role with every privilege on the tables but not their owner: it may write, not drop an index.
    const role = `writer_${Math.random().toString(36).slice(2, 10)}`;
    await queryOnce(url, `CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
    await queryOnce(url, `GRANT ALL ON ALL TABLES IN SCHEMA public, drizzle TO ${role}`);
    await queryOnce(url, `GRANT ALL ON ALL SEQUENCES IN SCHEMA public, drizzle TO ${role}`);
    await queryOnce(url, `GRANT ALL ON SCHEMA public, drizzle TO ${role}`);
    // Opening a store says CREATE SCHEMA IF NOT EXISTS for the migrations' table.
    await queryOnce(url, `GRANT CREATE ON DATABASE ${new URL(url).pathname.slice(1)} TO ${role}`);
    const asRole = new URL(url);
    asRole.username = role;
    asRole.password = "pw";
    store = await openStore(asRole.toString());
    expect(await beginBulkLoad(store)).toBe(true);
    expect(await queryOnce(url, "SELECT value FROM meta WHERE key = 'bulk_load'")).toEqual([{ value: "[]" }]);
    expect(await indexes(url)).toEqual(before);
    expect(await finishBulkLoad(store)).toBe(true);
    expect(await indexes(url)).toEqual(before);
  });
});
