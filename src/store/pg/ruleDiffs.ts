// Rule diffs on PostgreSQL (src/store/ruleDiffs.ts on SQLite): the rows of newly inserted records,
// written with one statement per table for a whole page; the backfill mark; and the backfill itself,
// which diffs records stored without one (or with an older DIFF_VERSION).
import type pg from "pg";
import { DIFF_VERSION, diffRecordChanges, type RuleDiff } from "../../diff/rules.ts";
import type { InsertedRecord } from "../insertHooks.ts";
import {
  BACKFILL_MARK_KEY,
  type BackfillResult,
  backfillMarkValue,
  marksAdvance,
  parseBackfillMark,
  ruleChangeColumns,
} from "../ruleDiffs.ts";
import type { PgStore } from "./connection.ts";
import { readPgMeta, writePgMeta } from "./quarantine.ts";
import { pgRows } from "./session.ts";
import { inPgTransaction } from "./transaction.ts";

const CHANGE_TYPES = ["text", "text", "text", "text", "text", "text", "integer", "integer"] as const;

/**
 * Diffs computed beforehand for records that have none stored yet: all rule_changes rows in one
 * statement (columns as arrays, so no bind-parameter limit), in record then change order, as SQLite
 * inserts them, so ids come out in the same order.
 */
async function insertPgRuleDiffRows(
  client: pg.ClientBase,
  records: readonly { id: string; diff: RuleDiff }[],
): Promise<void> {
  if (records.length === 0) return;
  const columns: unknown[][] = [[], ...CHANGE_TYPES.map(() => [])];
  for (const { id, diff } of records) {
    for (const change of diff.changes) {
      columns[0]!.push(id);
      for (const [i, value] of ruleChangeColumns(change).entries()) columns[i + 1]!.push(value);
    }
  }
  if (columns[0]!.length > 0) {
    const casts = ["text", ...CHANGE_TYPES].map((type, i) => `$${i + 1}::${type}[]`).join(", ");
    await client.query(
      `INSERT INTO rule_changes (audit_log_id, rule_id, rule_name, change, field, old_value, new_value,
         old_position, new_position)
       SELECT a, b, c, d, e, f, g, h, i FROM unnest(${casts}) WITH ORDINALITY AS c(a, b, c, d, e, f, g, h, i, n)
       ORDER BY n`,
      columns,
    );
  }
  await client.query(
    `INSERT INTO rule_diff_summaries (audit_log_id, summary, diff_version)
     SELECT id, summary, $3 FROM unnest($1::text[], $2::text[]) AS s(id, summary)
     ON CONFLICT (audit_log_id) DO UPDATE SET summary = excluded.summary, diff_version = excluded.diff_version`,
    [records.map((r) => r.id), records.map((r) => r.diff.summary), DIFF_VERSION],
  );
}

/** Inside the sync's transaction: the rule diffs of a page's new records. */
export async function onPgRecordsInserted(
  client: pg.ClientBase,
  records: readonly InsertedRecord[],
): Promise<void> {
  await insertPgRuleDiffRows(
    client,
    records.flatMap(({ id, diff }) => (diff === null ? [] : [{ id, diff }])),
  );
}

async function readPgMark(client: pg.ClientBase): Promise<number> {
  return parseBackfillMark(await readPgMeta(client, BACKFILL_MARK_KEY));
}

/** Inside the sync's transaction: records fromSeq+1..toSeq were diffed as inserted (see SQLite's). */
export async function advancePgBackfillMark(
  client: pg.ClientBase,
  fromSeq: number,
  toSeq: number,
): Promise<void> {
  if (toSeq <= fromSeq) return;
  if (marksAdvance(await readPgMark(client), fromSeq, toSeq)) {
    await writePgMeta(client, BACKFILL_MARK_KEY, backfillMarkValue(toSeq));
  }
}

const BACKFILL_BATCH = 10_000;

/** Diffs every record after the mark (all with `full`) that has rules but no diff of this version. */
export async function backfillPgRuleDiffs(
  store: PgStore,
  options: { full?: boolean; batchSize?: number } = {},
): Promise<BackfillResult> {
  let diffed = 0;
  let scanned = 0;
  let after = options.full ? 0 : await inPgTransaction(store, readPgMark);
  for (;;) {
    const done = await inPgTransaction(store, async (client) => {
      const batch = await pgRows<{
        id: string;
        seq: number;
        changes: string;
        fresh: boolean;
        needs: boolean;
      }>(
        client,
        `SELECT a.id, a.seq, a.changes, s.audit_log_id IS NULL AS fresh,
           (s.audit_log_id IS NULL OR s.diff_version < $1) AS needs
         FROM audit_logs a LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
         WHERE a.seq > $2 ORDER BY a.seq LIMIT $3`,
        [DIFF_VERSION, after, options.batchSize ?? BACKFILL_BATCH],
      );
      if (batch.length === 0) return true;
      const diffs: { id: string; diff: RuleDiff }[] = [];
      const stale: string[] = [];
      for (const row of batch) {
        // A record without changes.rules has nothing to diff (diffRecordChanges says so: null).
        const diff = row.needs ? diffRecordChanges(row.changes) : null;
        if (diff === null) continue;
        diffs.push({ id: row.id, diff });
        // No summary means no rows either (both are written together): only older diffs are replaced.
        if (!row.fresh) stale.push(row.id);
      }
      if (stale.length > 0)
        await client.query("DELETE FROM rule_changes WHERE audit_log_id = ANY($1)", [stale]);
      await insertPgRuleDiffRows(client, diffs);
      diffed += diffs.length;
      after = batch[batch.length - 1]!.seq;
      scanned += batch.length;
      await writePgMeta(client, BACKFILL_MARK_KEY, backfillMarkValue(after));
      return false;
    });
    if (done) break;
  }
  return { diffed, scanned };
}
