// `flagtrail verify`'s walk over audit_logs in seq order. Each record's hash is recomputed from its raw
// JSON, each link from the previous one; the columns the writer copies out of the raw record and the
// ones it derives from it (occurred_at and server_day through parseAuditTime) are compared with it; each
// rule diff (rule_changes rows and summary) is recomputed from the record's changes. The first mismatch
// is named. Not covered, because nothing in the raw record determines them: first_seen_at, sync_run_id.
import { parseAuditTime } from "../api/auditTime.ts";
import { DIFF_VERSION, diffRecordChanges } from "../diff/rules.ts";
import { IntegrityError } from "../errors.ts";
import { CHAIN_GENESIS, canonicalJson, chainLink, recordHash } from "../hash.ts";
import { type ChainHead, short } from "../headSignatures.ts";
import { serverDayOfDateText } from "../records/pageTally.ts";
import type { ChainReader, ChainRecord } from "../store/chainRead.ts";
import { ruleChangeColumns } from "../store/ruleDiffs.ts";
import { pacer } from "./pace.ts";

export interface RecordsCheck {
  records: number;
  head: ChainHead | null;
  /** Records whose stored rule diff was recomputed and matched. */
  ruleDiffs: number;
  /** Stored diffs of an older DIFF_VERSION (the next report's backfill recomputes them), not compared. */
  staleRuleDiffs: number;
}

/** Canonical JSON of a column holding JSON text, or the text itself if it is not JSON. */
function canonicalText(text: string | null): string | null {
  if (text === null) return null;
  try {
    return canonicalJson(JSON.parse(text));
  } catch {
    return text;
  }
}

/** An e-mail object is compared as JSON: its text may be written with other blanks or key order. */
function emailMismatch(stored: string | null, email: unknown): boolean {
  const expected =
    email === undefined || email === null ? null : typeof email === "string" ? email : canonicalJson(email);
  return (
    (stored !== null && typeof email === "object" && email !== null ? canonicalText(stored) : stored) !==
    expected
  );
}

/** The first column whose value is not what the writer derives from the raw record, if any. */
function columnMismatch(row: ChainRecord, raw: Record<string, unknown>): string | null {
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  // A copy the store did not read (the engine computes it from the raw record) is skipped.
  const direct: [string, unknown, unknown][] = [
    ["id", row.id, raw.id],
    ["name", row.name, raw.name],
    ["action_type", row.action_type, raw.actionType],
    ["change_log", row.change_log, text(raw.changeLog)],
    ["updated_by", row.updated_by, text(raw.updatedBy)],
    ["updated_by_user_id", row.updated_by_user_id, text(raw.updatedByUserID)],
    ["date_text", row.date_text, raw.date],
    ["time_text", row.time_text, raw.time],
  ];
  for (const [column, stored, expected] of direct) {
    if (stored !== undefined && stored !== expected) return column;
  }
  if (row.modifier_email !== undefined && emailMismatch(row.modifier_email, raw.modifierEmail))
    return "modifier_email";
  if (row.tags !== undefined) {
    const expectedTags = raw.tags === undefined || raw.tags === null ? null : canonicalJson(raw.tags);
    if (canonicalText(row.tags) !== expectedTags) return "tags";
  }
  // Derived the way the writer derives them: every report filters on these two.
  const dateText = text(raw.date) ?? "";
  const time = parseAuditTime(dateText, text(raw.time) ?? "");
  if (row.occurred_at !== (time?.occurredAt ?? null)) return "occurred_at";
  if (row.server_day !== (time?.serverDay ?? serverDayOfDateText(dateText))) return "server_day";
  return null;
}

/** What differs between the stored rule diff of a record and the one recomputed from its changes. */
function ruleDiffMismatch(row: ChainRecord, changes: unknown, backfilledTo: number): string | null {
  const diff = diffRecordChanges(changes);
  if (diff === null) {
    return row.summary !== null || row.ruleChanges.length > 0
      ? "rule diff rows exist for a record without changes.rules"
      : null;
  }
  if (row.summary === null) {
    // Not yet diffed (stored before the diff existed, above the backfill mark) is allowed; a summary
    // missing below the mark was removed.
    return row.seq <= backfilledTo ? "its rule diff summary is missing" : null;
  }
  if (row.diff_version !== DIFF_VERSION) return null;
  if (row.summary !== diff.summary) return "rule_diff_summaries.summary differs from the recomputed diff";
  const expected = diff.changes.map((c) => JSON.stringify(ruleChangeColumns(c)));
  const actual = row.ruleChanges.map((c) =>
    JSON.stringify([
      c.rule_id,
      c.rule_name,
      c.change,
      c.field,
      c.old_value,
      c.new_value,
      c.old_position,
      c.new_position,
    ]),
  );
  if (expected.length !== actual.length || expected.some((e, i) => e !== actual[i]))
    return "rule_changes rows differ from the recomputed diff";
  return null;
}

/** The chain link of one record after `previous`, or an IntegrityError naming what is wrong with it. */
function checkRecord(row: ChainRecord, previous: string, expectedSeq: number, backfilledTo: number): string {
  const where = `seq ${row.seq} (id ${row.id})`;
  if (row.seq !== expectedSeq) {
    throw new IntegrityError(
      `broken chain at ${where}: expected seq ${expectedSeq} next; records ${expectedSeq}..${row.seq - 1} are missing`,
      `record-${expectedSeq}-missing`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(row.raw);
  } catch {
    throw new IntegrityError(
      `broken chain at ${where}: the raw record is not valid JSON`,
      `record-${row.seq}-json`,
    );
  }
  const computed = recordHash(raw);
  if (computed !== row.record_hash) {
    throw new IntegrityError(
      `broken chain at ${where}: record_hash ${short(row.record_hash)} differs from the hash of its raw record ${short(computed)}`,
      `record-${row.seq}-hash`,
    );
  }
  const link = chainLink(previous, row.record_hash);
  if (link !== row.chain_hash) {
    throw new IntegrityError(
      `broken chain at ${where}: chain_hash ${short(row.chain_hash)} differs from the link computed from the previous record ${short(link)}`,
      `record-${row.seq}-link`,
    );
  }
  const column =
    raw !== null && typeof raw === "object" ? columnMismatch(row, raw as Record<string, unknown>) : "raw";
  if (column !== null) {
    throw new IntegrityError(
      `broken chain at ${where}: column ${column} differs from the raw record`,
      `record-${row.seq}-column-${column}`,
    );
  }
  const changes = (raw as { changes?: unknown }).changes;
  const diffProblem = ruleDiffMismatch(row, changes, backfilledTo);
  if (diffProblem !== null)
    throw new IntegrityError(`derived data of ${where}: ${diffProblem}`, `record-${row.seq}-rule-diff`);
  return link;
}

/** Walks every record of the snapshot; throws an IntegrityError at the first broken one. */
export async function checkRecords(reader: ChainReader, backfilledTo: number): Promise<RecordsCheck> {
  let previous = CHAIN_GENESIS;
  let records = 0;
  let head: ChainHead | null = null;
  let ruleDiffs = 0;
  let staleRuleDiffs = 0;
  const pause = pacer();
  for await (const row of reader.records()) {
    await pause();
    previous = checkRecord(row, previous, records + 1, backfilledTo);
    if (row.summary !== null) {
      if (row.diff_version === DIFF_VERSION) ruleDiffs += 1;
      else staleRuleDiffs += 1;
    }
    records += 1;
    head = { seq: row.seq, chainHash: row.chain_hash };
  }
  return { records, head, ruleDiffs, staleRuleDiffs };
}
