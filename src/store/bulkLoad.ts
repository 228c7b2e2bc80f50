// A first backfill into an empty store, on either engine: records load without the secondary indexes
// (an index is built from sorted data far faster than it is maintained row by row), which are built once
// after the load. The primary keys and seq's uniqueness stay: dedupe and the chain rely on them.
// - SQLite also sets aside the full-text insert trigger (rebuilt once after). Rule diffs are written as
//   records arrive: they need the parsed record.
// - PostgreSQL's full-text index (an expression GIN index) is one of the set-aside indexes. Dropping an
//   index takes an ACCESS EXCLUSIVE lock: it is taken with a short lock_timeout, and a store a reader is
//   holding (a BI tool's open transaction), or whose tables the role does not own, loads with its
//   indexes instead. Readers during the
//   load see an empty-then-growing table without those indexes; building them back takes a SHARE lock,
//   which blocks writers (the sync alone, under its lease), not readers. The end of the load also runs
//   ANALYZE (a SHARE UPDATE EXCLUSIVE lock: readers and writers go on): the report's plans need
//   statistics before autovacuum has run.
// What was set aside is written to meta in the transaction that sets it aside, so a load killed half-way
// is finished by the next sync.
import { z } from "zod";
import type { AnyStore } from "./openAny.ts";
import { inTransaction, type Queries, sql } from "./query.ts";
import { flushWalInBackground } from "./walFlush.ts";

const BULK_LOAD_KEY = "bulk_load";
/**
 * Kept during a load (as are primary keys): what dedupe and the chain rely on, the id's uniqueness
 * (SQLite: an index on the generated column; seq is the rowid there) and seq's (PostgreSQL), and SQLite's
 * FTS delete/update triggers.
 */
const KEPT = new Set([
  "audit_logs_id_idx",
  "audit_logs_seq_idx",
  "audit_logs_fts_after_delete",
  "audit_logs_fts_after_update",
]);
/**
 * What PostgreSQL's ANALYZE reads at the end of a load: the tables a backfill fills in proportion to the
 * history it reads, audit_logs by the columns reports filter, join and sort on. Its other columns (raw,
 * hashes, texts: each a sort of 30,000 sampled values in the database's collation) and the full-text
 * expression's statistics cost most of a whole-table ANALYZE and plan nothing; autovacuum takes them later.
 */
const ANALYZED = [
  "audit_logs (id, seq, occurred_at, server_day, action_type, name, updated_by)",
  "audit_log_revisions",
  "quarantine",
  "rule_changes",
  "rule_diff_summaries",
];
/** How long PostgreSQL's load waits for readers to let go of the tables before it loads with its indexes. */
const PG_LOCK_TIMEOUT = "1s";

const setAsideSchema = z.array(
  z.object({ type: z.enum(["index", "trigger"]), name: z.string(), sql: z.string() }),
);
type SetAside = z.infer<typeof setAsideSchema>;

/** The secondary indexes (and SQLite's triggers) of the loaded tables, which the load sets aside. */
async function setAsideOf(q: Queries): Promise<SetAside> {
  const items = setAsideSchema.parse(
    q.dialect === "postgres"
      ? // Indexes of constraints (primary keys) stay: DROP INDEX cannot drop them.
        await q.all(
          sql`SELECT 'index' AS type, i.indexname AS name, i.indexdef AS sql FROM pg_indexes i
              WHERE i.schemaname = current_schema() AND i.tablename IN ('audit_logs', 'rule_changes')
                AND NOT EXISTS (SELECT 1 FROM pg_constraint c
                  WHERE c.conindid = format('%I.%I', i.schemaname, i.indexname)::regclass)
              ORDER BY i.indexname`,
        )
      : await q.all(
          sql`SELECT type, name, sql FROM sqlite_master
              WHERE tbl_name IN ('audit_logs', 'rule_changes') AND type IN ('index', 'trigger') AND sql IS NOT NULL`,
        ),
  );
  return items.filter((item) => !KEPT.has(item.name));
}

const dropQuery = (item: SetAside[number]) =>
  sql.raw(`DROP ${item.type.toUpperCase()} "${item.name.replace(/"/g, '""')}"`);

/**
 * Drops what the load sets aside and returns it. PostgreSQL first takes the loaded tables' ACCESS
 * EXCLUSIVE lock within PG_LOCK_TIMEOUT; when a reader holds them longer, or the role may not drop their
 * indexes (it does not own the tables), it rolls back to before the attempt and sets nothing aside: the
 * transaction goes on and the load keeps its indexes.
 */
async function dropSetAside(q: Queries): Promise<SetAside> {
  if (q.dialect !== "postgres") {
    const items = await setAsideOf(q);
    for (const item of items) await q.run(dropQuery(item));
    return items;
  }
  await q.run(sql`SAVEPOINT bulk_load_set_aside`);
  try {
    await q.run(sql.raw(`SET LOCAL lock_timeout = '${PG_LOCK_TIMEOUT}'`));
    await q.run(sql`LOCK TABLE audit_logs, rule_changes IN ACCESS EXCLUSIVE MODE`);
    const items = await setAsideOf(q);
    for (const item of items) await q.run(dropQuery(item));
    await q.run(sql`RELEASE SAVEPOINT bulk_load_set_aside`);
    return items;
  } catch {
    await q.run(sql`ROLLBACK TO SAVEPOINT bulk_load_set_aside`);
    return [];
  }
}

/** Starts a bulk load if the store holds no record yet; returns whether it did. */
export async function beginBulkLoad(store: AnyStore): Promise<boolean> {
  return inTransaction(store, async (q) => {
    const empty = await q.get(sql`SELECT 1 AS x WHERE NOT EXISTS (SELECT 1 FROM audit_logs)`);
    const running = await q.get(sql`SELECT 1 AS x FROM meta WHERE key = ${BULK_LOAD_KEY}`);
    if (!empty || running) return false;
    const setAside = await dropSetAside(q);
    await q.run(
      sql`INSERT INTO meta (key, value, updated_at) VALUES (${BULK_LOAD_KEY}, ${JSON.stringify(setAside)}, ${Date.now()})`,
    );
    return true;
  });
}

/**
 * Finishes a pending bulk load (finished, or killed half-way): builds what it set aside; PostgreSQL
 * analyzes. On SQLite the built indexes go to disk in the background while the sync checks its windows
 * (walFlush.ts), not all in the checkpoint at close.
 */
export async function finishBulkLoad(store: AnyStore): Promise<boolean> {
  const finished = await finishIn(store);
  if (finished && store.engine === "sqlite") flushWalInBackground(store.path);
  return finished;
}

function finishIn(store: AnyStore): Promise<boolean> {
  return inTransaction(store, async (q) => {
    const row = await q.get<{ value: string }>(sql`SELECT value FROM meta WHERE key = ${BULK_LOAD_KEY}`);
    if (row === undefined) return false;
    const setAside = setAsideSchema.parse(JSON.parse(row.value));
    if (q.dialect === "sqlite") {
      // A migration run in between may have made some again (0011 made audit_logs anew).
      const build = async (type: SetAside[number]["type"]) => {
        for (const item of setAside) {
          if (item.type !== type) continue;
          const made = await q.get(
            sql`SELECT 1 AS x FROM sqlite_master WHERE type = ${type} AND name = ${item.name}`,
          );
          if (made === undefined) await q.run(sql.raw(item.sql));
        }
      };
      // The full-text rebuild first: the segments it merges away leave free pages, which the indexes
      // built next reuse (built before it, 17 pages of 16 KB stayed free after a 50,000-record load).
      await q.run(sql`INSERT INTO audit_logs_fts (audit_logs_fts) VALUES ('rebuild')`);
      await build("index");
      await build("trigger");
    } else {
      // The full-text GIN index builds in parallel (PostgreSQL 18); with the default 64 MB shared by its
      // workers, its leader merged longer: 50k records ~3.0 s → ~2.4 s at 256 MB (bench). Raised for this
      // transaction only, never lowered below what the server or the URL sets.
      await q.run(
        sql`SELECT set_config('maintenance_work_mem', '256MB', true) FROM pg_settings
            WHERE name = 'maintenance_work_mem' AND setting::bigint < 262144`,
      );
      for (const item of setAside) if (item.type === "index") await q.run(sql.raw(item.sql));
      // ANALYZE may run in a transaction (VACUUM may not): the mark goes only if the statistics were taken.
      await q.run(sql.raw(`ANALYZE ${ANALYZED.join(", ")}`));
    }
    await q.run(sql`DELETE FROM meta WHERE key = ${BULK_LOAD_KEY}`);
    return true;
  });
}
