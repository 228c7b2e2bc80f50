// Storing rule diffs: rows in rule_changes and the summary in rule_diff_summaries, idempotently.
// Called by the sync's insert hook for each new record (inside its transaction) and by backfill for
// records stored before the diff existed or diffed by an older DIFF_VERSION.
import Database from "better-sqlite3";
import { DIFF_VERSION, diffRecordChanges, type RuleChange, type RuleDiff } from "../diff/rules.ts";
import { sqliteOf as connectionOfStore, type Store } from "./connection.ts";

/** An open Store, or (inside the store's own transactions) its connection. */
export type DiffTarget = Database.Database | Store;

function sqliteOf(target: DiffTarget): Database.Database {
  return target instanceof Database ? target : connectionOfStore(target);
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

/** A rule change as the values of rule_changes' columns after audit_log_id, in table order. */
export function ruleChangeColumns(c: RuleChange): unknown[] {
  return [c.ruleId, c.ruleName, c.change, c.field, c.oldValue, c.newValue, c.oldPosition, c.newPosition];
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
    for (const c of diff.changes) insertChange.run(auditLogId, ...ruleChangeColumns(c));
    upsertSummary.run(auditLogId, diff.summary, DIFF_VERSION);
  })();
  return diff;
}

/**
 * The diff of a record inserted in the caller's transaction a moment ago: it cannot have rows yet, so
 * there is nothing to delete and no savepoint to take (the sync's write path).
 */
function insertFreshRuleDiffs(sqlite: Database.Database, auditLogId: string, changes: unknown): boolean {
  const diff = diffRecordChanges(changes);
  if (diff === null) return false;
  insertRuleDiffRows(sqlite, auditLogId, diff);
  return true;
}

/** Writes a diff computed beforehand for a record that has none stored yet. */
export function insertRuleDiffRows(sqlite: Database.Database, auditLogId: string, diff: RuleDiff): void {
  const { insertChange, upsertSummary } = statementsFor(sqlite);
  for (const c of diff.changes) insertChange.run(auditLogId, ...ruleChangeColumns(c));
  upsertSummary.run(auditLogId, diff.summary, DIFF_VERSION);
}

/**
 * Inside the sync's write transaction: records from `fromSeq` up to `toSeq` were diffed as they were
 * inserted, so a backfill mark that stood at `fromSeq` moves to `toSeq` (a report never rescans them).
 * A mark behind (an older store, a newer DIFF_VERSION) stays, for backfillRuleDiffs to catch up.
 */
export function advanceBackfillMark(sqlite: Database.Database, fromSeq: number, toSeq: number): void {
  if (marksAdvance(readMark(sqlite), fromSeq, toSeq)) writeMarkValue(sqlite, toSeq);
}

/** Whether a mark standing at `mark` moves to `toSeq` after records fromSeq+1..toSeq were diffed as inserted. */
export function marksAdvance(mark: number, fromSeq: number, toSeq: number): boolean {
  return toSeq > fromSeq && mark === fromSeq;
}

/** The mark's meta value: every record up to `seq` has a diff of this DIFF_VERSION. */
export function backfillMarkValue(seq: number): string {
  return JSON.stringify({ diffVersion: DIFF_VERSION, seq });
}

function writeMarkValue(sqlite: Database.Database, seq: number): void {
  sqlite
    .prepare(
      `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    )
    .run(BACKFILL_MARK_KEY, backfillMarkValue(seq), Date.now());
}

export interface BackfillResult {
  /** Records whose diff was (re)computed. */
  diffed: number;
  /** Records looked at (those after the last backfill's mark, or all of them on a full pass). */
  scanned: number;
}

const BACKFILL_BATCH = 10_000;
/** meta key: `{"diffVersion":n,"seq":s}`, every record up to seq s has a diff of that version. */
export const BACKFILL_MARK_KEY = "rule_diffs_backfilled";

function readMark(sqlite: Database.Database): number {
  return parseBackfillMark(
    sqlite.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(BACKFILL_MARK_KEY),
  );
}

/** The seq a stored mark stands at (0: none, unreadable, or of another DIFF_VERSION). */
export function parseBackfillMark(value: unknown): number {
  if (typeof value !== "string") return 0;
  try {
    const mark = JSON.parse(value) as { diffVersion?: unknown; seq?: unknown };
    // A newer diff version recomputes everything.
    return mark.diffVersion === DIFF_VERSION && typeof mark.seq === "number" ? mark.seq : 0;
  } catch {
    return 0;
  }
}

/**
 * Diffs every stored record that has `changes.rules` but no summary, or a summary from an older
 * DIFF_VERSION. It remembers how far it got (meta BACKFILL_MARK_KEY), so the next call only looks at
 * records stored since: cheap enough to run before every report. `full` ignores the mark. Works in
 * batches of short transactions so a concurrent sync is not blocked long.
 */
export function backfillRuleDiffs(
  store: DiffTarget,
  options: { full?: boolean; batchSize?: number } = {},
): BackfillResult {
  const sqlite = sqliteOf(store);
  const pending = sqlite.prepare(
    `SELECT a.id, a.seq, a.changes, s.audit_log_id IS NULL AS fresh,
            (s.audit_log_id IS NULL OR s.diff_version < @version)
              AND CASE WHEN json_valid(a.changes) THEN json_type(a.changes, '$.rules') END NOT IN ('null')
              AS needs_diff
     FROM audit_logs a
     LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
     WHERE a.seq > @after
     ORDER BY a.seq LIMIT @limit`,
  );
  const writeMark = sqlite.prepare(
    `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  );
  let diffed = 0;
  let scanned = 0;
  let after = options.full ? 0 : readMark(sqlite);
  for (;;) {
    const batch = pending.all({
      version: DIFF_VERSION,
      after,
      limit: options.batchSize ?? BACKFILL_BATCH,
    }) as {
      id: string;
      seq: number;
      changes: string;
      needs_diff: number | null;
      fresh: number;
    }[];
    if (batch.length === 0) break;
    sqlite.transaction(() => {
      for (const row of batch) {
        if (row.needs_diff !== 1) continue;
        // No summary means no rows either (both are written together): nothing to replace.
        if (row.fresh === 1) {
          if (insertFreshRuleDiffs(sqlite, row.id, row.changes)) diffed += 1;
        } else if (storeRuleDiffs(sqlite, row.id, row.changes) !== null) diffed += 1;
      }
      after = batch[batch.length - 1]!.seq;
      scanned += batch.length;
      writeMark.run(BACKFILL_MARK_KEY, backfillMarkValue(after), Date.now());
    })();
  }
  return { diffed, scanned };
}
