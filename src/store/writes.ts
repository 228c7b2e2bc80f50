// The write side of the store: one page of records goes in as ONE transaction, together with whatever
// progress it advances (window page, counters). Records are deduplicated on id; an id seen again with
// other content becomes a revision (the first version stays); invalid records go to quarantine.

import type Database from "better-sqlite3";
import type { z } from "zod";
import { type ParsedAuditTime, parseAuditTime } from "../api/auditTime.ts";
import type { InvalidItem } from "../api/entities.ts";
import { type AuditLogRecord, auditLogRecordSchema } from "../api/schemas.ts";
import { diffRecordChanges, type RuleDiff } from "../diff/rules.ts";
import { sqliteOf } from "./connection.ts";
import { updateQuarantineDigest } from "./digests.ts";
import { CHAIN_GENESIS, chainLink, recordHash } from "./hash.ts";
import { type InsertedRecord, onRecordsInserted } from "./insertHooks.ts";
import type { Store } from "./open.ts";

export type TimeParser = (dateText: string, timeText: string) => ParsedAuditTime | null;

export const CHAIN_HEAD_SEQ_KEY = "chain_head_seq";
export const CHAIN_HEAD_HASH_KEY = "chain_head_hash";

export type RecordOutcome =
  | { kind: "inserted"; id: string; seq: number }
  | { kind: "duplicate"; id: string; seq: number }
  | { kind: "mutation"; id: string; seq: number }
  | { kind: "quarantined"; id: string | null; fresh: boolean };

export interface PageCounts {
  fetched: number;
  inserted: number;
  duplicates: number;
  mutations: number;
  quarantined: number;
  warnings: number;
}

export interface PageWriteResult extends PageCounts {
  /** One entry per record of the page, in page order. */
  outcomes: RecordOutcome[];
  warningMessages: string[];
}

export interface PageContext {
  syncRunId: number | null;
  /** Path and query of the request that returned the page (stored with quarantined records). */
  requestPath?: string | undefined;
  /** The request's startDate..endDate: bounds the day of a quarantined record whose date is unreadable. */
  dayRange?: { from: string; to: string } | undefined;
  now?: number | undefined;
}

export function emptyCounts(): PageCounts {
  return { fetched: 0, inserted: 0, duplicates: 0, mutations: 0, quarantined: 0, warnings: 0 };
}

export function addCounts(into: PageCounts, from: PageCounts): void {
  into.fetched += from.fetched;
  into.inserted += from.inserted;
  into.duplicates += from.duplicates;
  into.mutations += from.mutations;
  into.quarantined += from.quarantined;
  into.warnings += from.warnings;
}

export interface RecordWriter {
  /**
   * Stores one page. `alsoInTransaction` runs inside the same transaction after the records (advance
   * window progress, checkpoints, run counters): either all of it commits or none of it.
   */
  writePage(
    records: readonly unknown[],
    context: PageContext,
    alsoInTransaction?: (result: PageWriteResult) => void,
  ): PageWriteResult;
  /** The current head of the hash chain (GENESIS at seq 0 on an empty store). */
  chainHead(): { seq: number; hash: string };
}

interface ExistingRow {
  seq: number;
  record_hash: string;
}

function jsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function modifierEmailText(value: AuditLogRecord["modifierEmail"]): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? value : JSON.stringify(value);
}

function recordIdOf(raw: unknown): string | null {
  if (raw !== null && typeof raw === "object" && "id" in raw) {
    const id = (raw as { id: unknown }).id;
    if (typeof id === "string" && id.length > 0) return id;
  }
  return null;
}

/**
 * The server day of a `date` text alone, whatever its `time` text: a record whose time cannot be read
 * still belongs to a day (coverage counts it). The fixed clock only lets parseAuditTime read the date.
 */
export function serverDayOfDateText(dateText: unknown): string | null {
  if (typeof dateText !== "string") return null;
  return parseAuditTime(dateText, "00:00:00 GMT+0000")?.serverDay ?? null;
}

function rawDateOf(raw: unknown): unknown {
  return raw !== null && typeof raw === "object" && "date" in raw
    ? (raw as { date: unknown }).date
    : undefined;
}

function issuesJson(issues: readonly z.core.$ZodIssue[]): string {
  return JSON.stringify(
    issues.map((issue) => ({ code: issue.code, path: issue.path.map(String), message: issue.message })),
  );
}

/** Statements of the record writer, prepared once per connection. */
function statementsFor(sqlite: Database.Database) {
  return {
    selectExisting: sqlite.prepare<[string], ExistingRow>(
      "SELECT seq, record_hash FROM audit_logs WHERE id = ?",
    ),
    selectHead: sqlite.prepare<[], { seq: number; chain_hash: string }>(
      "SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1",
    ),
    insertRecord: sqlite.prepare(
      `INSERT INTO audit_logs (id, name, action_type, change_log, updated_by, updated_by_user_id,
         modifier_email, occurred_at, server_day, date_text, time_text, tags, raw, record_hash,
         seq, chain_hash, first_seen_at, sync_run_id)
       VALUES (@id, @name, @actionType, @changeLog, @updatedBy, @updatedByUserId, @modifierEmail,
         @occurredAt, @serverDay, @dateText, @timeText, @tags, @raw, @recordHash, @seq,
         @chainHash, @firstSeenAt, @syncRunId)
       ON CONFLICT (id) DO NOTHING`,
    ),
    insertRevision: sqlite.prepare(
      `INSERT OR IGNORE INTO audit_log_revisions (audit_log_id, raw, record_hash, seen_at, sync_run_id)
       VALUES (?, ?, ?, ?, ?)`,
    ),
    insertQuarantine: sqlite.prepare(
      `INSERT OR IGNORE INTO quarantine (record_id, raw, raw_hash, issues, request_path, received_at,
         sync_run_id, server_day, day_min, day_max)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // A quarantined record seen again in a narrower request learns a narrower day range (coverage).
    narrowQuarantine: sqlite.prepare(
      `UPDATE quarantine SET day_min = max(coalesce(day_min, @from), @from), day_max = min(coalesce(day_max, @to), @to)
       WHERE raw_hash = @hash AND server_day IS NULL`,
    ),
    upsertMeta: sqlite.prepare(
      `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    ),
  };
}
type Statements = ReturnType<typeof statementsFor>;
const statementCache = new WeakMap<Database.Database, Statements>();

function statements(sqlite: Database.Database): Statements {
  let cached = statementCache.get(sqlite);
  if (!cached) {
    cached = statementsFor(sqlite);
    statementCache.set(sqlite, cached);
  }
  return cached;
}

/** The current head of the hash chain; audit_logs is the authority, meta mirrors it for readers. */
export function readChainHead(sqlite: Database.Database): { seq: number; hash: string } {
  const row = statements(sqlite).selectHead.get();
  return row ? { seq: row.seq, hash: row.chain_hash } : { seq: 0, hash: CHAIN_GENESIS };
}

/** The audit_logs columns of a valid record that do not depend on the store (seq, chain, run). */
export interface RecordColumns {
  id: string;
  name: string;
  actionType: string;
  changeLog: string | null;
  updatedBy: string | null;
  updatedByUserId: string | null;
  modifierEmail: string | null;
  occurredAt: number | null;
  serverDay: string | null;
  dateText: string;
  timeText: string;
  tags: string | null;
  raw: string;
  recordHash: string;
  // Set by PageTally.link just before the insert (one object per record, no copy).
  seq: number;
  chainHash: string;
  firstSeenAt: number;
  syncRunId: number | null;
}

/**
 * A record as far as it can be worked out before the write transaction: validated, hashed, its columns
 * and rule diff. Pure (no database), so a sync does this as each page arrives and the transaction only
 * writes. It keeps strings only, not the parsed record: a batch waiting for its commit stays small.
 */
export type PreparedRecord =
  | { valid: false; id: string | null; rawJson: string; hash: string; issues: string; day: string | null }
  | { valid: true; columns: RecordColumns; diff: RuleDiff | null; timeWarning: string | null };

function columnsOf(
  record: AuditLogRecord,
  raw: string,
  hash: string,
  time: ParsedAuditTime | null,
): RecordColumns {
  return {
    id: record.id,
    name: record.name,
    actionType: record.actionType,
    changeLog: record.changeLog ?? null,
    updatedBy: record.updatedBy ?? null,
    updatedByUserId: record.updatedByUserID ?? null,
    modifierEmail: modifierEmailText(record.modifierEmail),
    occurredAt: time?.occurredAt ?? null,
    serverDay: time?.serverDay ?? serverDayOfDateText(record.date),
    dateText: record.date,
    timeText: record.time,
    tags: jsonOrNull(record.tags),
    raw,
    recordHash: hash,
    seq: 0,
    chainHash: "",
    firstSeenAt: 0,
    syncRunId: null,
  };
}

export function prepareRecords(
  records: readonly unknown[],
  parseTime: TimeParser = parseAuditTime,
): PreparedRecord[] {
  return records.map((raw): PreparedRecord => {
    // Stored as received (key order included); hashed in canonical form, so key order never makes a revision.
    const rawJson = JSON.stringify(raw ?? null);
    const hash = recordHash(raw ?? null);
    const parsed = auditLogRecordSchema.safeParse(raw);
    if (!parsed.success) {
      return {
        valid: false,
        id: recordIdOf(raw),
        rawJson,
        hash,
        issues: issuesJson(parsed.error.issues),
        day: serverDayOfDateText(rawDateOf(raw)),
      };
    }
    const record = parsed.data;
    const time = parseTime(record.date, record.time);
    // Most records have `changes: {}`; only rule edits carry changes.rules to diff.
    const diff = record.changes && "rules" in record.changes ? diffRecordChanges(record.changes) : null;
    const timeWarning =
      time === null
        ? `record ${record.id}: could not parse date/time ${JSON.stringify(record.date)} ${JSON.stringify(record.time)}; stored with occurred_at NULL`
        : null;
    return { valid: true, columns: columnsOf(record, rawJson, hash, time), diff, timeWarning };
  });
}

/**
 * Stores a page's records on `sqlite`, which must be inside a transaction: dedupe on id, revisions for
 * changed content, quarantine for invalid records, the hash chain, and the rule diffs of new records.
 */
export function storeRecords(
  sqlite: Database.Database,
  records: readonly unknown[],
  context: PageContext,
  parseTime: TimeParser = parseAuditTime,
): PageWriteResult {
  return storePrepared(sqlite, prepareRecords(records, parseTime), context);
}

function quarantineRecord(
  st: Statements,
  p: Extract<PreparedRecord, { valid: false }>,
  context: PageContext,
  now: number,
): boolean {
  const row = quarantineRowOf(p, context, now);
  const fresh =
    st.insertQuarantine.run(
      row.recordId,
      row.raw,
      row.rawHash,
      row.issues,
      row.requestPath,
      row.receivedAt,
      row.syncRunId,
      row.serverDay,
      row.dayMin,
      row.dayMax,
    ).changes > 0;
  const narrower = quarantineNarrowing(p, fresh, context);
  if (narrower) st.narrowQuarantine.run({ ...narrower, hash: p.hash });
  return fresh;
}

/** One quarantine row as both engines insert it (the table's columns but its id). */
export interface QuarantineInsert {
  recordId: string | null;
  raw: string;
  rawHash: string;
  issues: string;
  requestPath: string | null;
  receivedAt: number;
  syncRunId: number | null;
  serverDay: string | null;
  dayMin: string | null;
  dayMax: string | null;
}

/**
 * A quarantined record seen again whose date does not parse learns the request's day range, to be
 * narrowed to (coverage counts it within the narrowest range that returned it); null when nothing to do.
 */
export function quarantineNarrowing(
  p: Extract<PreparedRecord, { valid: false }>,
  fresh: boolean,
  context: PageContext,
): { from: string; to: string } | null {
  return !fresh && p.day === null && context.dayRange ? context.dayRange : null;
}

/** The quarantine row of an invalid record of a page (both engines insert the same values). */
export function quarantineRowOf(
  p: Extract<PreparedRecord, { valid: false }>,
  context: PageContext,
  now: number,
): QuarantineInsert {
  return {
    recordId: p.id,
    raw: p.rawJson,
    rawHash: p.hash,
    issues: p.issues,
    requestPath: context.requestPath ?? null,
    receivedAt: now,
    syncRunId: context.syncRunId,
    serverDay: p.day,
    dayMin: context.dayRange?.from ?? null,
    dayMax: context.dayRange?.to ?? null,
  };
}

/** A valid prepared record. */
export type ValidPrepared = Extract<PreparedRecord, { valid: true }>;
/** A stored record's identity as the writer compares it. */
export interface StoredVersion {
  seq: number;
  recordHash: string;
}

/**
 * The decisions of storing one page, whichever engine answers the database's questions (is this id
 * stored, was this revision or quarantined row new): counters, outcomes, warnings, the chain's next
 * link, the records whose rule diffs go in. Both engines' writers feed it records in page order.
 */
export class PageTally {
  readonly result: PageWriteResult = { ...emptyCounts(), outcomes: [], warningMessages: [] };
  /** Records new to the store, in page order (their rule diffs go in with them). */
  readonly inserted: InsertedRecord[] = [];

  constructor(
    /** The chain head: moves on with each inserted record. */
    public head: { seq: number; hash: string },
    private readonly context: { now: number; syncRunId: number | null },
  ) {}

  /** A quarantined record; `fresh` when its raw hash was not in quarantine yet. */
  quarantined(p: Extract<PreparedRecord, { valid: false }>, fresh: boolean): void {
    this.result.fetched += 1;
    // A quarantined record seen again (page overlap, lookback) is a duplicate, not a new problem.
    if (fresh) this.result.quarantined += 1;
    else this.result.duplicates += 1;
    this.result.outcomes.push({ kind: "quarantined", id: p.id, fresh });
  }

  /** Fills the columns that make `p` the chain's next link (seq, chain hash, run), before its insert. */
  link(p: ValidPrepared): RecordColumns {
    const { columns } = p;
    columns.seq = this.head.seq + 1;
    columns.chainHash = chainLink(this.head.hash, columns.recordHash);
    columns.firstSeenAt = this.context.now;
    columns.syncRunId = this.context.syncRunId;
    return columns;
  }

  /** `p`, linked by link(), was inserted: the head moves to it. */
  stored(p: ValidPrepared): void {
    const { columns } = p;
    this.result.fetched += 1;
    this.head = { seq: columns.seq, hash: columns.chainHash };
    if (p.timeWarning !== null) {
      this.result.warnings += 1;
      this.result.warningMessages.push(p.timeWarning);
    }
    this.result.inserted += 1;
    this.result.outcomes.push({ kind: "inserted", id: columns.id, seq: columns.seq });
    this.inserted.push({ id: columns.id, diff: p.diff });
  }

  /**
   * `p`'s id is stored already as `existing`: the same content is a duplicate (counted here, returns
   * false); other content returns true, to be filed as a revision and then passed to revision().
   */
  alreadyStored(p: ValidPrepared, existing: StoredVersion): boolean {
    if (existing.recordHash !== p.columns.recordHash) return true;
    this.result.fetched += 1;
    this.result.duplicates += 1;
    this.result.outcomes.push({ kind: "duplicate", id: p.columns.id, seq: existing.seq });
    return false;
  }

  /** An audit log must not change: the first version stays, this one was filed as a revision. */
  revision(p: ValidPrepared, existing: StoredVersion, fresh: boolean): void {
    this.result.fetched += 1;
    if (fresh) this.result.mutations += 1;
    else this.result.duplicates += 1;
    this.result.outcomes.push({
      kind: fresh ? "mutation" : "duplicate",
      id: p.columns.id,
      seq: existing.seq,
    });
  }
}

export function storePrepared(
  sqlite: Database.Database,
  prepared: readonly PreparedRecord[],
  context: PageContext,
): PageWriteResult {
  const st = statements(sqlite);
  const now = context.now ?? Date.now();
  const tally = new PageTally(readChainHead(sqlite), { now, syncRunId: context.syncRunId });

  for (const p of prepared) {
    if (!p.valid) {
      tally.quarantined(p, quarantineRecord(st, p, context, now));
      continue;
    }
    // Insert first: in a backfill nearly every record is new, and the id's index answers both questions.
    if (st.insertRecord.run(tally.link(p)).changes > 0) {
      tally.stored(p);
      continue;
    }
    const row = st.selectExisting.get(p.columns.id);
    if (row === undefined) throw new Error(`audit record ${p.columns.id} neither stored nor present`);
    const existing = { seq: row.seq, recordHash: row.record_hash };
    if (!tally.alreadyStored(p, existing)) continue;
    const { columns } = p;
    const fresh =
      st.insertRevision.run(columns.id, columns.raw, columns.recordHash, now, context.syncRunId).changes > 0;
    tally.revision(p, existing, fresh);
  }

  const { result, head, inserted } = tally;
  // verify checks quarantine against this digest: a deleted or edited row is caught.
  if (result.quarantined > 0) updateQuarantineDigest(sqlite);
  if (inserted.length > 0) {
    st.upsertMeta.run(CHAIN_HEAD_SEQ_KEY, String(head.seq), now);
    st.upsertMeta.run(CHAIN_HEAD_HASH_KEY, head.hash, now);
    onRecordsInserted(sqlite, inserted);
  }
  return result;
}

/**
 * Items of another read (entity history) that failed their schema: kept whole in quarantine with every
 * issue, like audit records, and the quarantine digest brought up to date. They have no server day, so
 * they never count for the audit log's coverage. Returns how many were new.
 */
export function quarantineItems(
  sqlite: Database.Database,
  items: readonly InvalidItem[],
  context: QuarantineContext,
): number {
  if (items.length === 0) return 0;
  const st = statements(sqlite);
  let fresh = 0;
  for (const item of items) {
    const row = itemQuarantineRowOf(item, context);
    fresh += st.insertQuarantine.run(
      row.recordId,
      row.raw,
      row.rawHash,
      row.issues,
      row.requestPath,
      row.receivedAt,
      row.syncRunId,
      row.serverDay,
      row.dayMin,
      row.dayMax,
    ).changes;
  }
  updateQuarantineDigest(sqlite);
  return fresh;
}

interface QuarantineContext {
  requestPath: string;
  now: number;
  syncRunId: number | null;
}

/** The quarantine row of an item that failed its schema (no day: it is not an audit record), on both engines. */
export function itemQuarantineRowOf(item: InvalidItem, context: QuarantineContext): QuarantineInsert {
  return {
    recordId: recordIdOf(item.raw),
    raw: JSON.stringify(item.raw ?? null),
    rawHash: recordHash(item.raw ?? null),
    issues: JSON.stringify(item.issues),
    requestPath: context.requestPath,
    receivedAt: context.now,
    syncRunId: context.syncRunId,
    serverDay: null,
    dayMin: null,
    dayMax: null,
  };
}

/** One page in its own transaction (tests, tools); the sync commits batches (syncBatch.ts). */
export function createRecordWriter(store: Store, options: { parseTime?: TimeParser } = {}): RecordWriter {
  const sqlite = sqliteOf(store);
  const pageTransaction = sqlite.transaction(
    (records: readonly unknown[], context: PageContext, also?: (result: PageWriteResult) => void) => {
      const result = storeRecords(sqlite, records, context, options.parseTime);
      also?.(result);
      return result;
    },
  );
  return {
    // IMMEDIATE: take the write lock up front so a concurrent reader-turned-writer cannot deadlock us.
    writePage: (records, context, also) => pageTransaction.immediate(records, context, also),
    chainHead: () => readChainHead(sqlite),
  };
}

/** Runs `fn` in one IMMEDIATE transaction on the store's connection. */
export function inTransaction<T>(sqlite: Database.Database, fn: () => T): T {
  return sqlite.transaction(fn).immediate();
}
