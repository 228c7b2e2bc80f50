// Bulk load on PostgreSQL: none. SQLite's (src/store/bulkLoad.ts) drops secondary indexes and the FTS
// trigger for a first backfill because SQLite maintains them row by row far slower than it builds them;
// on PostgreSQL the sync inserts whole pages with one statement each and the GIN index's pending list
// (fastupdate) already defers its work, while dropping indexes would take an ACCESS EXCLUSIVE lock that
// blocks every reader (report, sql, BI tools) of a shared store for the whole load. Not measured as a
// gain, so not done: both functions say no load is under way.
import type { PgStore } from "./connection.ts";

export async function beginPgBulkLoad(_store: PgStore): Promise<boolean> {
  return false;
}

export async function finishPgBulkLoad(_store: PgStore): Promise<boolean> {
  return false;
}
