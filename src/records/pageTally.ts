// A page of audit records as both engines write it: prepared ahead of the write (validated, hashed and
// diffed by src/records/prepare.ts as each page arrives), then sorted by PageTally into new records
// (the next links of the hash chain), duplicates, revisions (an id seen again with other content: the
// first version stays) and quarantine (its rows: ./quarantineRows.ts).
// Pure: no database, so not in src/store. src/store/writes.ts (SQLite) and src/store/pg/writes.ts
// (PostgreSQL) ask their database and follow these decisions.

import { parseAuditTime } from "../api/auditTime.ts";
import type { RuleDiff } from "../diff/rules.ts";
import { chainLink } from "../hash.ts";

export const CHAIN_HEAD_SEQ_KEY = "chain_head_seq";
export const CHAIN_HEAD_HASH_KEY = "chain_head_hash";

/** A record new to the store, whose rule diff goes in with it (src/store/ruleDiffs.ts). */
export interface InsertedRecord {
  id: string;
  /** The record's rule diff, computed before the transaction; null when it has no rules. */
  diff: RuleDiff | null;
}

type RecordOutcome =
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

/**
 * The server day of a `date` text alone, whatever its `time` text: a record whose time cannot be read
 * still belongs to a day (coverage counts it). The fixed clock only lets parseAuditTime read the date.
 */
export function serverDayOfDateText(dateText: unknown): string | null {
  if (typeof dateText !== "string") return null;
  return parseAuditTime(dateText, "00:00:00 GMT+0000")?.serverDay ?? null;
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
