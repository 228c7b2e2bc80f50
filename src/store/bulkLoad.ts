// A first backfill loads without the secondary indexes, built once from sorted data after (far faster than
// row by row; what is set aside, when, and why a killed load resumes: docs/sync.md).
import { z } from "zod";
import { deleteMetaValueQuery, readMetaValueIn, writeMetaValueQuery } from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { inTransaction, type Queries, sql } from "./query.ts";
import { flushWalInBackground } from "./walFlush.ts";

const BULK_LOAD_KEY = "bulk_load";
/** Kept in a load: the id's and seq's uniqueness (SQLite: seq is the rowid), FTS delete/update triggers. */
const KEPT = new Set([
  "audit_logs_id_idx",
  "audit_logs_seq_idx",
  "audit_logs_fts_after_delete",
  "audit_logs_fts_after_update",
]);
// What PostgreSQL analyzes after a load: audit_logs only by the columns reports filter, join and sort on
// (the others and the full-text expression cost most of a whole-table ANALYZE and plan nothing).
const ANALYZED = [
  "audit_logs (id, seq, occurred_at, server_day, action_type, name, updated_by)",
  "audit_log_revisions",
  "quarantine",
  "rule_changes",
  "rule_diff_summaries",
];

const setAsideSchema = z.array(
  z.object({ type: z.enum(["index", "trigger"]), name: z.string(), sql: z.string() }),
);
type SetAside = z.infer<typeof setAsideSchema>;

/** Drops the secondary indexes (and SQLite's triggers) of the loaded tables; returns them. */
async function dropAll(q: Queries): Promise<SetAside> {
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
  const dropped = items.filter((item) => !KEPT.has(item.name));
  for (const item of dropped) {
    await q.run(sql.raw(`DROP ${item.type.toUpperCase()} "${item.name.replace(/"/g, '""')}"`));
  }
  return dropped;
}

/** Drops what the load sets aside and returns it; on PostgreSQL nothing without the lock or the right. */
async function dropSetAside(q: Queries): Promise<SetAside> {
  if (q.dialect !== "postgres") return dropAll(q);
  await q.run(sql`SAVEPOINT bulk_load_set_aside`);
  try {
    // How long the load waits for readers to let go of the tables before it loads with its indexes.
    await q.run(sql`SET LOCAL lock_timeout = '1s'`);
    await q.run(sql`LOCK TABLE audit_logs, rule_changes IN ACCESS EXCLUSIVE MODE`);
    const items = await dropAll(q);
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
    if (!empty || (await readMetaValueIn(q, BULK_LOAD_KEY)) !== undefined) return false;
    const setAside = await dropSetAside(q);
    await q.run(writeMetaValueQuery(BULK_LOAD_KEY, JSON.stringify(setAside), Date.now()));
    return true;
  });
}

/** Finishes a pending bulk load, or one killed half-way; SQLite's indexes reach disk in the background. */
export async function finishBulkLoad(store: AnyStore): Promise<boolean> {
  const finished = await inTransaction(store, async (q) => {
    const value = await readMetaValueIn(q, BULK_LOAD_KEY);
    if (value === undefined) return false;
    const setAside = setAsideSchema.parse(JSON.parse(value));
    if (q.dialect === "sqlite") {
      // The full-text rebuild first: the indexes built next reuse the pages its merges free (else 17 of
      // 16 KB stayed free after a 50,000-record load). A migration run in between may have rebuilt some.
      await q.run(sql`INSERT INTO audit_logs_fts (audit_logs_fts) VALUES ('rebuild')`);
      for (const type of ["index", "trigger"]) {
        for (const item of setAside.filter((i) => i.type === type)) {
          const made = await q.get(
            sql`SELECT 1 AS x FROM sqlite_master WHERE type = ${type} AND name = ${item.name}`,
          );
          if (made === undefined) await q.run(sql.raw(item.sql));
        }
      }
    } else {
      // The parallel GIN build's workers share this memory (50k records: ~3.0 s at 64 MB → ~2.4 s at
      // 256 MB). For this transaction only, never below what the server or the URL sets.
      await q.run(
        sql`SELECT set_config('maintenance_work_mem', '256MB', true) FROM pg_settings
            WHERE name = 'maintenance_work_mem' AND setting::bigint < 262144`,
      );
      for (const item of setAside) if (item.type === "index") await q.run(sql.raw(item.sql));
      // ANALYZE may run in a transaction (VACUUM may not): the mark goes only if the statistics were taken.
      await q.run(sql.raw(`ANALYZE ${ANALYZED.join(", ")}`));
    }
    await q.run(deleteMetaValueQuery(BULK_LOAD_KEY));
    return true;
  });
  if (finished && store.engine === "sqlite") flushWalInBackground(store.path);
  return finished;
}
