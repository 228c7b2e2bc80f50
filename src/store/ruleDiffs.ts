// Rule diffs (rule_changes rows, a rule_diff_summaries row per record): written with new records, and by
// the backfill for records stored before or diffed by an older DIFF_VERSION.
import { z } from "zod";
import { type OrphanRows, orphanRowsError } from "../chainChecks.ts";
import { DIFF_VERSION, diffRecordChanges, type RuleChange, type RuleDiff } from "../diff/rules.ts";
import type { InsertedRecord } from "../records/pageTally.ts";
import { parseStoredJson } from "../storedJson.ts";
import { type MetaEntry, readMetaValueIn, writeMetaValueQuery } from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, insertInto, inTransaction, type Queries, queriesOf, sql } from "./query.ts";
import { TABLES } from "./tables.ts";

/** A rule change as the values of rule_changes' columns after audit_log_id, in table order. */
export function ruleChangeColumns(c: RuleChange): unknown[] {
  return [c.ruleId, c.ruleName, c.change, c.field, c.oldValue, c.newValue, c.oldPosition, c.newPosition];
}

/** Writes the diffs computed for records with none stored yet (new records, the backfill), in record order. */
export async function insertRuleDiffRows(q: Queries, records: readonly InsertedRecord[]): Promise<void> {
  const diffed = records.filter((r): r is { id: string; diff: RuleDiff } => r.diff !== null);
  // A new record with a summary already was removed, its diff left behind (verify names it): not to be covered.
  const ids = inList(diffed.map((r) => r.id));
  const left =
    diffed.length > 0 && (await q.get(sql`SELECT 1 FROM rule_diff_summaries WHERE audit_log_id IN ${ids}`));
  if (left) throw orphanRowsError((await orphanRuleDiffsIn(q, records)) as OrphanRows);
  const changes = diffed.flatMap(({ id, diff }) => diff.changes.map((c) => [id, ...ruleChangeColumns(c)]));
  await insertInto(q, TABLES.ruleChanges, changes);
  const summaries = diffed.map(({ id, diff }) => [id, diff.summary, DIFF_VERSION]);
  await insertInto(q, TABLES.ruleDiffSummaries, summaries);
}

/**
 * The first rule-diff table holding rows of records not in audit_logs (or in `removed`: records inserted in
 * this transaction, absent before it), or null. Reads every row: verify's, and a sync's once refused.
 */
export async function orphanRuleDiffsIn(q: Queries, removed: readonly { id: string }[] = []) {
  const of = (table: string) =>
    sql`SELECT ${sql.raw(`'${table}'`)} AS "table", count(*) AS "rows", min(audit_log_id COLLATE "binary") AS first
        FROM ${sql.raw(table)} r WHERE audit_log_id IN ${inList(removed.map((r) => r.id))}
          OR NOT EXISTS (SELECT 1 FROM audit_logs a WHERE a.id = r.audit_log_id)`;
  const rows = await q.all<OrphanRows>(sql`${of("rule_diff_summaries")} UNION ALL ${of("rule_changes")}`);
  const found = rows.find((r) => Number(r.rows) > 0);
  return found ? { ...found, rows: Number(found.rows) } : null;
}

const readMark = async (q: Queries) => parseBackfillMark(await readMetaValueIn(q, BACKFILL_MARK_KEY));
const markValue = (seq: number) => JSON.stringify({ diffVersion: DIFF_VERSION, seq });
const writeMarkQuery = (seq: number) => writeMetaValueQuery(BACKFILL_MARK_KEY, markValue(seq), Date.now());

/**
 * In the sync's write: records `fromSeq`..`toSeq` were diffed as inserted, so a mark (`mark`, as read in
 * the same transaction) at `fromSeq` moves to `toSeq` (never rescanned); a mark behind (older store or
 * DIFF_VERSION) stays, for backfillRuleDiffs. Returns meta's new entry, if the mark moves.
 */
export function backfillMarkMoved(mark: number, fromSeq: number, toSeq: number): MetaEntry | null {
  return toSeq > fromSeq && mark === fromSeq ? [BACKFILL_MARK_KEY, markValue(toSeq)] : null;
}

/** Records whose diff was (re)computed, and records looked at (after the mark, or all on a full pass). */
type BackfillResult = { diffed: number; scanned: number };

const BACKFILL_BATCH = 10_000;
/** meta key: `{"diffVersion":n,"seq":s}`, every record up to seq s has a diff of that version. */
export const BACKFILL_MARK_KEY = "rule_diffs_backfilled";

/** Up to which seq every record has this DIFF_VERSION's diff (else 0): the backfill's start, verify's bar. */
export const parseBackfillMark = (value: string | undefined): number =>
  parseStoredJson(z.object({ diffVersion: z.literal(DIFF_VERSION), seq: z.number() }), value)?.seq ?? 0;

interface PendingRow {
  id: string;
  seq: number;
  changes: string;
  /** No summary stored (so no rows either: both are written together). 0/1 on SQLite. */
  fresh: boolean | number;
  needs: boolean | number;
}

/** One batch of the backfill in its own transaction; returns the last seq looked at, or null when done. */
async function backfillBatch(q: Queries, after: number, limit: number, result: BackfillResult) {
  const batch = await q.all<PendingRow>(
    sql`SELECT a.id, a.seq, a.changes, s.audit_log_id IS NULL AS fresh,
          (s.audit_log_id IS NULL OR s.diff_version < ${DIFF_VERSION}) AS needs
        FROM audit_logs a LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
        WHERE a.seq > ${after} ORDER BY a.seq LIMIT ${limit}`,
  );
  if (batch.length === 0) return null;
  const diffs: InsertedRecord[] = [];
  const stale: string[] = [];
  for (const row of batch) {
    const diff = row.needs ? diffRecordChanges(row.changes) : null;
    if (diff === null) continue;
    diffs.push({ id: row.id, diff });
    if (!row.fresh) stale.push(row.id);
  }
  if (stale.length > 0) {
    await q.run(sql`DELETE FROM rule_changes WHERE audit_log_id IN ${inList(stale)}`);
    await q.run(sql`DELETE FROM rule_diff_summaries WHERE audit_log_id IN ${inList(stale)}`);
  }
  await insertRuleDiffRows(q, diffs);
  const last = batch[batch.length - 1]!.seq;
  await q.run(writeMarkQuery(last));
  result.diffed += diffs.length;
  result.scanned += batch.length;
  return last;
}

/**
 * Diffs every record with `changes.rules` but no summary or an older DIFF_VERSION's, from the mark on
 * (`full`: from the start); cheap enough before every report, in short transactions (a sync waits little).
 */
export async function backfillRuleDiffs(
  store: AnyStore,
  options: { full?: boolean; batchSize?: number } = {},
): Promise<BackfillResult> {
  const result: BackfillResult = { diffed: 0, scanned: 0 };
  let after: number | null = options.full ? 0 : await readMark(await queriesOf(store));
  while (after !== null) {
    const from: number = after;
    after = await inTransaction(store, (t) =>
      backfillBatch(t, from, options.batchSize ?? BACKFILL_BATCH, result),
    );
  }
  return result;
}
