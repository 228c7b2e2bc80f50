// Storing rule diffs: rows in rule_changes and the summary in rule_diff_summaries, idempotently.
// Called by the sync's insert hook for each new record (inside its transaction) and by backfill for
// records stored before the diff existed or diffed by an older DIFF_VERSION.
import Database from "better-sqlite3";
import type { Db, Store } from "../store/open.ts";
import { DIFF_VERSION, diffRecordChanges, type RuleDiff } from "./rules.ts";

/** A better-sqlite3 connection, the drizzle database over one, or an open Store. */
export type DiffTarget = Database.Database | Db | Pick<Store, "sqlite">;

function sqliteOf(target: DiffTarget): Database.Database {
  if (target instanceof Database) return target;
  if ("sqlite" in target) return target.sqlite;
  // drizzle's better-sqlite3 database carries its connection as $client (not in its declared type).
  const client = (target as { $client?: unknown }).$client;
  if (client instanceof Database) return client;
  throw new TypeError("storeRuleDiffs needs a better-sqlite3 connection, a drizzle database or a Store");
}

interface Statements {
  deleteChanges: Database.Statement;
  insertChange: Database.Statement;
  upsertSummary: Database.Statement;
}

const statementCache = new WeakMap<Database.Database, Statements>();

function statementsFor(sqlite: Database.Database): Statements {
  let statements = statementCache.get(sqlite);
  if (!statements) {
    statements = {
      deleteChanges: sqlite.prepare("DELETE FROM rule_changes WHERE audit_log_id = ?"),
      insertChange: sqlite.prepare(
        `INSERT INTO rule_changes (audit_log_id, rule_id, rule_name, change, field, old_value, new_value,
           old_position, new_position)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      upsertSummary: sqlite.prepare(
        `INSERT INTO rule_diff_summaries (audit_log_id, summary, diff_version) VALUES (?, ?, ?)
         ON CONFLICT(audit_log_id) DO UPDATE SET summary = excluded.summary, diff_version = excluded.diff_version`,
      ),
    };
    statementCache.set(sqlite, statements);
  }
  return statements;
}

/**
 * Diffs `changes.rules` of one stored record and replaces whatever diff it had (so running it twice
 * stores the same rows once). `changes` is the record's `changes` object or its JSON text. Returns
 * null, and writes nothing, when the record has no rules. The audit_logs row must exist already
 * (foreign key); it may run inside the caller's transaction (better-sqlite3 nests it as a savepoint).
 */
export function storeRuleDiffs(target: DiffTarget, auditLogId: string, changes: unknown): RuleDiff | null {
  const diff = diffRecordChanges(changes);
  if (diff === null) return null;
  const sqlite = sqliteOf(target);
  const { deleteChanges, insertChange, upsertSummary } = statementsFor(sqlite);
  sqlite.transaction(() => {
    deleteChanges.run(auditLogId);
    for (const c of diff.changes) {
      insertChange.run(
        auditLogId,
        c.ruleId,
        c.ruleName,
        c.change,
        c.field,
        c.oldValue,
        c.newValue,
        c.oldPosition,
        c.newPosition,
      );
    }
    upsertSummary.run(auditLogId, diff.summary, DIFF_VERSION);
  })();
  return diff;
}

export interface BackfillResult {
  /** Records whose diff was (re)computed. */
  diffed: number;
}

const BACKFILL_BATCH = 500;

/**
 * Diffs every stored record that has `changes.rules` but no summary, or a summary from an older
 * DIFF_VERSION. Works in batches of short transactions so a concurrent sync is not blocked long.
 */
export function backfillRuleDiffs(store: DiffTarget): BackfillResult {
  const sqlite = sqliteOf(store);
  const pending = sqlite.prepare(
    `SELECT a.id, a.seq, a.changes FROM audit_logs a
     LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
     WHERE (s.audit_log_id IS NULL OR s.diff_version < ?)
       AND CASE WHEN json_valid(a.changes) THEN json_type(a.changes, '$.rules') END NOT IN ('null')
       AND a.seq > ?
     ORDER BY a.seq LIMIT ?`,
  );
  let diffed = 0;
  let after = 0;
  for (;;) {
    const batch = pending.all(DIFF_VERSION, after, BACKFILL_BATCH) as {
      id: string;
      seq: number;
      changes: string;
    }[];
    if (batch.length === 0) break;
    sqlite.transaction(() => {
      for (const row of batch) {
        if (storeRuleDiffs(sqlite, row.id, row.changes) !== null) diffed += 1;
      }
    })();
    after = batch[batch.length - 1]!.seq;
  }
  return { diffed };
}
