// Copies a SQLite store into a PostgreSQL database, table by table, values as stored: how tests get the
// same history into both engines until `flagtrail sync` writes PostgreSQL. The PostgreSQL store is opened
// (migrated) by flagtrail itself first; identity sequences are moved past the copied ids afterwards.
import Database from "better-sqlite3";
import pg from "pg";
import { openPgStore } from "../../src/store/pg/open.ts";

/**
 * SQLite-only storage of audit_logs (migration 0011): the record as JSONB and the hashes as bytes, which
 * its documented columns (virtual there, stored on PostgreSQL) read.
 */
export const SQLITE_STORAGE_COLUMNS = new Set(["raw_data", "record_hash_bytes", "chain_hash_bytes"]);

/** In foreign-key order. action_type_categories is not copied: the open writes it from code, as on SQLite. */
export const TABLES = [
  "audit_logs",
  "audit_log_revisions",
  "quarantine",
  "sync_runs",
  "checkpoints",
  "sync_windows",
  "coverage",
  "leases",
  "rule_changes",
  "rule_diff_summaries",
  "listed_days",
  "config_versions",
  "config_version_revisions",
  "experiment_snapshots",
  "metric_snapshots",
  "entity_fetches",
  "config_edit_links",
  "config_version_changes",
  "meta",
] as const;

/** Parameters per INSERT stay under PostgreSQL's 65,535. */
const MAX_PARAMS = 30_000;

async function copyTable(sqlite: Database.Database, client: pg.Client, table: string): Promise<number> {
  const columns = (
    await client.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'
       ORDER BY ordinal_position`,
      [table],
    )
  ).rows.map((r) => r.name);
  const rows = sqlite
    .prepare(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM ${table}`)
    .raw(true)
    .all() as unknown[][];
  const perInsert = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  for (let start = 0; start < rows.length; start += perInsert) {
    const chunk = rows.slice(start, start + perInsert);
    const tuples = chunk.map(
      (_, r) => `(${columns.map((__, c) => `$${r * columns.length + c + 1}`).join(", ")})`,
    );
    await client.query(
      `INSERT INTO ${table} (${columns.map((c) => `"${c}"`).join(", ")}) VALUES ${tuples.join(", ")}`,
      chunk.flat(),
    );
  }
  if (columns.includes("id") && table !== "audit_logs") {
    await client.query(
      `SELECT setval(pg_get_serial_sequence('${table}', 'id'), coalesce(max(id), 0) + 1, false) FROM ${table}`,
    );
  }
  return rows.length;
}

/** Copies every table of the SQLite store at `sqlitePath` into the (empty) database at `url`; returns rows per table. */
export async function copyStore(sqlitePath: string, url: string): Promise<Record<string, number>> {
  await (await openPgStore(url)).close();
  const sqlite = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const counts: Record<string, number> = {};
  try {
    await client.query("BEGIN");
    for (const table of TABLES) counts[table] = await copyTable(sqlite, client, table);
    await client.query("COMMIT");
  } finally {
    await client.end();
    sqlite.close();
  }
  return counts;
}
