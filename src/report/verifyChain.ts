// `flagtrail verify`'s store half: re-walk the hash chain in seq order. Each record's hash is
// recomputed from its raw JSON, each link from the previous one; the columns the writer copies out of
// the raw record and the ones it derives from it (occurred_at and server_day through parseAuditTime)
// are compared with it; each rule diff (rule_changes rows and summary) is recomputed from the record's
// changes; each stored revision (audit_log_revisions) is re-hashed. The first mismatch is named.
// Not covered, because nothing in the raw record determines them: first_seen_at, sync_run_id, and the
// coverage table (mutable by design: each sync rewrites it; the report recounts from audit_logs).
import type Database from "better-sqlite3";
import { parseAuditTime } from "../api/auditTime.ts";
import { DIFF_VERSION, diffRecordChanges } from "../diff/rules.ts";
import { IntegrityError } from "../errors.ts";
import { CHAIN_GENESIS, canonicalJson, chainLink, recordHash } from "../store/hash.ts";
import { BACKFILL_MARK_KEY, ruleChangeColumns } from "../store/ruleDiffs.ts";
import { CHAIN_HEAD_HASH_KEY, CHAIN_HEAD_SEQ_KEY, serverDayOfDateText } from "../store/writes.ts";

export interface ChainCheck {
  records: number;
  head: { seq: number; chainHash: string } | null;
  /** Records whose stored rule diff was recomputed and matched. */
  ruleDiffs: number;
  /** Stored diffs of an older DIFF_VERSION (the next report's backfill recomputes them), not compared. */
  staleRuleDiffs: number;
  /** audit_log_revisions rows re-hashed. */
  revisions: number;
}

interface Row {
  seq: number;
  id: string;
  name: string;
  action_type: string;
  change_log: string | null;
  updated_by: string | null;
  updated_by_user_id: string | null;
  modifier_email: string | null;
  date_text: string;
  time_text: string;
  tags: string | null;
  changes: string;
  raw: string;
  record_hash: string;
  chain_hash: string;
  occurred_at: number | null;
  server_day: string | null;
  summary: string | null;
  diff_version: number | null;
}

function short(hash: string): string {
  return `${hash.slice(0, 12)}…`;
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

/** The first column whose value is not what the writer derives from the raw record, if any. */
function columnMismatch(row: Row, raw: Record<string, unknown>): string | null {
  const text = (value: unknown) => (typeof value === "string" ? value : null);
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
    if (stored !== expected) return column;
  }
  const email = raw.modifierEmail;
  const expectedEmail =
    email === undefined || email === null ? null : typeof email === "string" ? email : canonicalJson(email);
  const storedEmail =
    row.modifier_email !== null && typeof email === "object" && email !== null
      ? canonicalText(row.modifier_email)
      : row.modifier_email;
  if (storedEmail !== expectedEmail) return "modifier_email";
  if (canonicalText(row.changes) !== canonicalJson(raw.changes ?? {})) return "changes";
  const expectedTags = raw.tags === undefined || raw.tags === null ? null : canonicalJson(raw.tags);
  if (canonicalText(row.tags) !== expectedTags) return "tags";
  // Derived the way the writer derives them: every report filters on these two.
  const time = parseAuditTime(row.date_text, row.time_text);
  if (row.occurred_at !== (time?.occurredAt ?? null)) return "occurred_at";
  if (row.server_day !== (time?.serverDay ?? serverDayOfDateText(row.date_text))) return "server_day";
  return null;
}

interface StoredChange {
  rule_id: string;
  rule_name: string | null;
  change: string;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  old_position: number | null;
  new_position: number | null;
}

/** What differs between the stored rule diff of a record and the one recomputed from its changes. */
function ruleDiffMismatch(row: Row, stored: StoredChange[], backfilledTo: number): string | null {
  const diff = diffRecordChanges(row.changes);
  if (diff === null) {
    return row.summary !== null || stored.length > 0
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
  const actual = stored.map((c) =>
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

function backfillMark(sqlite: Database.Database): number {
  const value = sqlite.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(BACKFILL_MARK_KEY);
  try {
    const mark = typeof value === "string" ? (JSON.parse(value) as { seq?: unknown }) : null;
    return typeof mark?.seq === "number" ? mark.seq : 0;
  } catch {
    return 0;
  }
}

/** Each stored later version of a record: its hash, and that it is a version of that record. */
function verifyRevisions(sqlite: Database.Database): number {
  let count = 0;
  const rows = sqlite
    .prepare("SELECT id, audit_log_id, raw, record_hash FROM audit_log_revisions ORDER BY id")
    .iterate() as IterableIterator<{ id: number; audit_log_id: string; raw: string; record_hash: string }>;
  for (const row of rows) {
    const where = `revision ${row.id} of record ${row.audit_log_id}`;
    let raw: unknown;
    try {
      raw = JSON.parse(row.raw);
    } catch {
      throw new IntegrityError(`${where}: its raw record is not valid JSON`);
    }
    if (recordHash(raw) !== row.record_hash)
      throw new IntegrityError(`${where}: record_hash differs from the hash of its raw record`);
    if (raw === null || typeof raw !== "object" || (raw as { id?: unknown }).id !== row.audit_log_id)
      throw new IntegrityError(`${where}: its raw record has another id`);
    count += 1;
  }
  return count;
}

export function verifyChain(sqlite: Database.Database): ChainCheck {
  const rows = sqlite
    .prepare(
      `SELECT seq, id, name, action_type, change_log, updated_by, updated_by_user_id, modifier_email,
              date_text, time_text, tags, changes, raw, record_hash, chain_hash, occurred_at, server_day,
              s.summary, s.diff_version
       FROM audit_logs a LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
       ORDER BY seq`,
    )
    .iterate() as IterableIterator<Row>;
  let previous = CHAIN_GENESIS;
  let expectedSeq = 1;
  let records = 0;
  let head: ChainCheck["head"] = null;
  let ruleDiffs = 0;
  let staleRuleDiffs = 0;
  const backfilledTo = backfillMark(sqlite);
  const storedChanges = sqlite.prepare(
    `SELECT rule_id, rule_name, change, field, old_value, new_value, old_position, new_position
     FROM rule_changes WHERE audit_log_id = ? ORDER BY id`,
  );
  const hasChanges = sqlite.prepare("SELECT 1 FROM rule_changes WHERE audit_log_id = ? LIMIT 1").pluck();
  for (const row of rows) {
    const where = `seq ${row.seq} (id ${row.id})`;
    if (row.seq !== expectedSeq) {
      throw new IntegrityError(
        `broken chain at ${where}: expected seq ${expectedSeq} next; records ${expectedSeq}..${row.seq - 1} are missing`,
      );
    }
    let raw: unknown;
    try {
      raw = JSON.parse(row.raw);
    } catch {
      throw new IntegrityError(`broken chain at ${where}: the raw record is not valid JSON`);
    }
    const computed = recordHash(raw);
    if (computed !== row.record_hash) {
      throw new IntegrityError(
        `broken chain at ${where}: record_hash ${short(row.record_hash)} differs from the hash of its raw record ${short(computed)}`,
      );
    }
    const link = chainLink(previous, row.record_hash);
    if (link !== row.chain_hash) {
      throw new IntegrityError(
        `broken chain at ${where}: chain_hash ${short(row.chain_hash)} differs from the link computed from the previous record ${short(link)}`,
      );
    }
    const column =
      raw !== null && typeof raw === "object" ? columnMismatch(row, raw as Record<string, unknown>) : "raw";
    if (column !== null) {
      throw new IntegrityError(`broken chain at ${where}: column ${column} differs from the raw record`);
    }
    // Only rule edits have rule diffs: other records cost one indexed lookup.
    const mayHaveDiff = row.summary !== null || row.changes.includes('"rules"');
    const stored = mayHaveDiff
      ? (storedChanges.all(row.id) as StoredChange[])
      : hasChanges.get(row.id) === undefined
        ? []
        : (storedChanges.all(row.id) as StoredChange[]);
    const diffProblem = ruleDiffMismatch(row, stored, backfilledTo);
    if (diffProblem !== null) throw new IntegrityError(`derived data of ${where}: ${diffProblem}`);
    if (row.summary !== null) {
      if (row.diff_version === DIFF_VERSION) ruleDiffs += 1;
      else staleRuleDiffs += 1;
    }
    previous = link;
    records += 1;
    expectedSeq += 1;
    head = { seq: row.seq, chainHash: row.chain_hash };
  }

  // The writer mirrors the head in meta: records cut off the end of the chain show up here.
  const meta = new Map(
    (
      sqlite
        .prepare("SELECT key, value FROM meta WHERE key IN (?, ?)")
        .all(CHAIN_HEAD_SEQ_KEY, CHAIN_HEAD_HASH_KEY) as { key: string; value: string }[]
    ).map((r) => [r.key, r.value]),
  );
  const metaSeq = meta.get(CHAIN_HEAD_SEQ_KEY);
  const metaHash = meta.get(CHAIN_HEAD_HASH_KEY);
  if (metaSeq !== undefined && metaHash !== undefined) {
    if (Number(metaSeq) !== (head?.seq ?? 0) || metaHash !== (head?.chainHash ?? CHAIN_GENESIS)) {
      throw new IntegrityError(
        `the chain head recorded in meta (seq ${metaSeq}, ${short(metaHash)}) is not the last stored record ` +
          `(${head ? `seq ${head.seq}, ${short(head.chainHash)}` : "no records"}): records were removed from or added to the end`,
      );
    }
  }
  const revisions = verifyRevisions(sqlite);
  return { records, head, ruleDiffs, staleRuleDiffs, revisions };
}

/** A report's chain head must still be in the store, unchanged (the store only grows). */
export function assertChainContains(
  sqlite: Database.Database,
  head: { seq: number; chainHash: string },
): void {
  const stored = sqlite.prepare("SELECT chain_hash FROM audit_logs WHERE seq = ?").pluck().get(head.seq) as
    | string
    | undefined;
  if (stored !== head.chainHash) {
    throw new IntegrityError(
      `the manifest's chain head (seq ${head.seq}, ${short(head.chainHash)}) is not in the store ` +
        `(${stored === undefined ? "no record at that seq" : `found ${short(stored)}`})`,
    );
  }
}
