// Bulk load on PostgreSQL: statistics, not indexes. SQLite's (src/store/bulkLoad.ts) drops secondary
// indexes and the FTS trigger for a first backfill because SQLite maintains them row by row far slower
// than it builds them; on PostgreSQL the sync inserts whole pages with one statement each and the GIN
// index's pending list (fastupdate) already defers its work, while dropping indexes would take an
// ACCESS EXCLUSIVE lock that blocks every reader (report, sql, BI tools) of a shared store for the
// whole load. What a first backfill does leave behind is tables without statistics: the report's plans
// rely on them and autovacuum may not have run before the first report, so the end of the load runs
// ANALYZE (a SHARE UPDATE EXCLUSIVE lock: readers and writers go on). The mark in meta makes a load
// killed half-way get its ANALYZE from the next sync's finishPgBulkLoad, as on SQLite.
import type { PgStore } from "./connection.ts";
import { pgRows } from "./session.ts";
import { inPgTransaction } from "./transaction.ts";

const BULK_LOAD_KEY = "bulk_load";
/** The tables a backfill fills in proportion to the history it reads. */
const LOADED_TABLES = [
  "audit_logs",
  "audit_log_revisions",
  "quarantine",
  "rule_changes",
  "rule_diff_summaries",
];

/** Starts a bulk load if the store holds no record yet; returns whether it did. */
export async function beginPgBulkLoad(store: PgStore): Promise<boolean> {
  return inPgTransaction(store, async (client) => {
    const [row] = await pgRows<{ empty: boolean; running: boolean }>(
      client,
      `SELECT NOT EXISTS (SELECT 1 FROM audit_logs) AS empty,
              EXISTS (SELECT 1 FROM meta WHERE key = $1) AS running`,
      [BULK_LOAD_KEY],
    );
    if (!row?.empty || row.running) return false;
    // "[]": nothing set aside (the shape SQLite's mark has), only statistics owed.
    await client.query("INSERT INTO meta (key, value, updated_at) VALUES ($1, '[]', $2)", [
      BULK_LOAD_KEY,
      Date.now(),
    ]);
    return true;
  });
}

/** Analyzes the loaded tables if a bulk load is pending (finished, or killed half-way). */
export async function finishPgBulkLoad(store: PgStore): Promise<boolean> {
  return inPgTransaction(store, async (client) => {
    const deleted = await client.query("DELETE FROM meta WHERE key = $1", [BULK_LOAD_KEY]);
    if (deleted.rowCount === 0) return false;
    // ANALYZE may run in a transaction (VACUUM may not): the mark goes only if the statistics were taken.
    await client.query(`ANALYZE ${LOADED_TABLES.join(", ")}`);
    return true;
  });
}
