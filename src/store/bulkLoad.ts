// A first backfill into an empty store, on either engine. What differs is what each engine sets aside:
// - SQLite loads records without the secondary indexes and the full-text trigger, and builds both once
//   after the load: it builds an index from sorted data far faster than it maintains one row by row.
//   (Rule diffs are written as records arrive: they need the parsed record.)
// - PostgreSQL sets nothing aside: dropping an index takes an ACCESS EXCLUSIVE lock that blocks every
//   reader (report, sql, BI tools) of a shared store for the whole load, and the sync inserts whole pages
//   per statement while the GIN index's pending list (fastupdate) defers its work. What a first load
//   leaves behind there is tables without statistics, which the report's plans rely on before autovacuum
//   has run: the end of the load runs ANALYZE (a SHARE UPDATE EXCLUSIVE lock: readers and writers go on).
// What was set aside is written to meta in the transaction that sets it aside, so a load killed half-way
// is finished by the next sync.
import { z } from "zod";
import type { AnyStore } from "./openAny.ts";
import { inTransaction, type Queries, sql } from "./query.ts";

const BULK_LOAD_KEY = "bulk_load";
/**
 * Kept during a SQLite load: the id's uniqueness is what dedupe relies on (seq, the chain's order, is the
 * rowid: nothing to set aside).
 */
const KEPT = new Set(["audit_logs_id_idx", "audit_logs_fts_after_delete", "audit_logs_fts_after_update"]);
/** The tables a backfill fills in proportion to the history it reads (PostgreSQL's ANALYZE). */
const LOADED_TABLES = [
  "audit_logs",
  "audit_log_revisions",
  "quarantine",
  "rule_changes",
  "rule_diff_summaries",
];

const setAsideSchema = z.array(
  z.object({ type: z.enum(["index", "trigger"]), name: z.string(), sql: z.string() }),
);
type SetAside = z.infer<typeof setAsideSchema>;

/** SQLite's secondary indexes and triggers of the loaded tables, which it drops for the load. */
async function setAsideOf(q: Queries): Promise<SetAside> {
  if (q.dialect === "postgres") return [];
  const items = setAsideSchema.parse(
    await q.all(
      sql`SELECT type, name, sql FROM sqlite_master
          WHERE tbl_name IN ('audit_logs', 'rule_changes') AND type IN ('index', 'trigger') AND sql IS NOT NULL`,
    ),
  );
  return items.filter((item) => !KEPT.has(item.name));
}

/** Starts a bulk load if the store holds no record yet; returns whether it did. */
export async function beginBulkLoad(store: AnyStore): Promise<boolean> {
  return inTransaction(store, async (q) => {
    const empty = await q.get(sql`SELECT 1 AS x WHERE NOT EXISTS (SELECT 1 FROM audit_logs)`);
    const running = await q.get(sql`SELECT 1 AS x FROM meta WHERE key = ${BULK_LOAD_KEY}`);
    if (!empty || running) return false;
    const setAside = await setAsideOf(q);
    await q.run(
      sql`INSERT INTO meta (key, value, updated_at) VALUES (${BULK_LOAD_KEY}, ${JSON.stringify(setAside)}, ${Date.now()})`,
    );
    for (const item of setAside)
      await q.run(sql.raw(`DROP ${item.type.toUpperCase()} "${item.name.replace(/"/g, '""')}"`));
    return true;
  });
}

/** Finishes a pending bulk load (finished, or killed half-way): SQLite builds what it set aside, PostgreSQL analyzes. */
export async function finishBulkLoad(store: AnyStore): Promise<boolean> {
  return inTransaction(store, async (q) => {
    const row = await q.get<{ value: string }>(sql`SELECT value FROM meta WHERE key = ${BULK_LOAD_KEY}`);
    if (row === undefined) return false;
    if (q.dialect === "sqlite") {
      const setAside = setAsideSchema.parse(JSON.parse(row.value));
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
      await build("index");
      await q.run(sql`INSERT INTO audit_logs_fts (audit_logs_fts) VALUES ('rebuild')`);
      await build("trigger");
    } else {
      // ANALYZE may run in a transaction (VACUUM may not): the mark goes only if the statistics were taken.
      await q.run(sql.raw(`ANALYZE ${LOADED_TABLES.join(", ")}`));
    }
    await q.run(sql`DELETE FROM meta WHERE key = ${BULK_LOAD_KEY}`);
    return true;
  });
}
