// A first backfill into an empty store loads records without the secondary indexes and the full-text
// trigger, and builds both once after the load: SQLite builds an index from sorted data far faster than
// it maintains one row by row. (Rule diffs are written as records arrive: they need the parsed record.) What was set aside is written to meta in the
// same transaction that sets it aside, so a load killed half-way is finished by the next write open.
import { z } from "zod";
import { type Store, sqliteOf } from "./connection.ts";

const BULK_LOAD_KEY = "bulk_load";
/** Kept during the load: the primary key and seq's uniqueness are what dedupe and the chain rely on. */
const KEPT = new Set(["audit_logs_seq_idx", "audit_logs_fts_after_delete", "audit_logs_fts_after_update"]);

const setAsideSchema = z.array(
  z.object({ type: z.enum(["index", "trigger"]), name: z.string(), sql: z.string() }),
);

/** Starts a bulk load if the store holds no record yet; returns whether it did. */
export async function beginBulkLoad(store: Store): Promise<boolean> {
  const sqlite = sqliteOf(store);
  return sqlite
    .transaction(() => {
      const empty = sqlite.prepare("SELECT NOT EXISTS (SELECT 1 FROM audit_logs)").pluck().get() === 1;
      const running =
        sqlite.prepare("SELECT 1 FROM meta WHERE key = ?").pluck().get(BULK_LOAD_KEY) !== undefined;
      if (!empty || running) return false;
      const items = sqlite
        .prepare(
          `SELECT type, name, sql FROM sqlite_master
           WHERE tbl_name IN ('audit_logs', 'rule_changes') AND type IN ('index', 'trigger') AND sql IS NOT NULL`,
        )
        .all() as { type: "index" | "trigger"; name: string; sql: string }[];
      const setAside = items.filter((item) => !KEPT.has(item.name));
      sqlite
        .prepare("INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)")
        .run(BULK_LOAD_KEY, JSON.stringify(setAside), Date.now());
      for (const item of setAside)
        sqlite.exec(`DROP ${item.type.toUpperCase()} "${item.name.replace(/"/g, '""')}"`);
      return true;
    })
    .immediate();
}

/** Builds what a bulk load set aside, if one is pending (finished, or killed half-way). */
export async function finishBulkLoad(store: Store): Promise<boolean> {
  const sqlite = sqliteOf(store);
  const value = sqlite.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(BULK_LOAD_KEY);
  if (typeof value !== "string") return false;
  const setAside = setAsideSchema.parse(JSON.parse(value));
  sqlite
    .transaction(() => {
      for (const item of setAside) if (item.type === "index") sqlite.exec(item.sql);
      sqlite.exec("INSERT INTO audit_logs_fts (audit_logs_fts) VALUES ('rebuild')");
      for (const item of setAside) if (item.type === "trigger") sqlite.exec(item.sql);
      sqlite.prepare("DELETE FROM meta WHERE key = ?").run(BULK_LOAD_KEY);
    })
    .immediate();
  return true;
}
