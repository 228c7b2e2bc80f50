// The sync batch's record writer on PostgreSQL (src/store/syncBatch.ts; SQLite's is src/store/writes.ts), inside the batch's transaction. The
// decisions (duplicate, revision, quarantine, the chain's next link, counters) are PageTally's, shared
// with SQLite; what differs is how the database is asked. A batch costs a fixed number of round trips,
// not one per record or page: the chain head and the ids of all its pages are looked up with one query,
// its new records go in with one COPY (Queries.insertRows) once every page is tallied, their rule diffs
// with one more, the chain head's meta rows with one statement. Quarantined records and revisions are rare and go in one by one.
import { CHAIN_GENESIS } from "../../hash.ts";
import {
  CHAIN_HEAD_HASH_KEY,
  CHAIN_HEAD_SEQ_KEY,
  type PageContext,
  PageTally,
  type PageWriteResult,
  type PreparedRecord,
  type RecordColumns,
  type StoredVersion,
} from "../../records/pageTally.ts";
import { quarantineNarrowing, quarantineRowOf } from "../../records/quarantineRows.ts";
import { insertQuarantineIn } from "../digests.ts";
import type { Queries } from "../query.ts";
import { sql } from "../query.ts";
import { insertRuleDiffRows, type RecordDiff } from "../ruleDiffs.ts";
import type { BatchWriter } from "../syncBatch.ts";
import type { ChainHead } from "../writes.ts";

/** audit_logs' columns as the COPY lists them; recordRow gives their values in this order. */
export const RECORD_COLUMN_NAMES = [
  "id",
  "name",
  "action_type",
  "change_log",
  "updated_by",
  "updated_by_user_id",
  "modifier_email",
  "occurred_at",
  "server_day",
  "date_text",
  "time_text",
  "tags",
  "raw",
  "record_hash",
  "seq",
  "chain_hash",
  "first_seen_at",
  "sync_run_id",
];

/** One array literal a record: a getter per column cost 18 calls a record (900,000 a 50k sync). */
const recordRow = (c: RecordColumns): unknown[] => [
  c.id,
  c.name,
  c.actionType,
  c.changeLog,
  c.updatedBy,
  c.updatedByUserId,
  c.modifierEmail,
  c.occurredAt,
  c.serverDay,
  c.dateText,
  c.timeText,
  c.tags,
  c.raw,
  c.recordHash,
  c.seq,
  c.chainHash,
  c.firstSeenAt,
  c.syncRunId,
];

/**
 * The chain head and the stored version of each of these ids, in one round trip (one array parameter):
 * a batch's fixed round trips are what its commit waits on while the sync prepares the next batch.
 */
async function headAndStoredVersions(
  q: Queries,
  ids: readonly string[],
): Promise<{ head: ChainHead; known: Map<string, StoredVersion> }> {
  const rows = await q.all<{
    id: string;
    seq: number;
    record_hash: string;
    chain_hash: string;
    head: boolean;
  }>(
    sql`(SELECT id, seq, record_hash, chain_hash, true AS head FROM audit_logs ORDER BY seq DESC LIMIT 1)
        UNION ALL
        SELECT id, seq, record_hash, chain_hash, false FROM audit_logs WHERE id = ANY(${sql.param(ids)})`,
  );
  let head: ChainHead = { seq: 0, hash: CHAIN_GENESIS };
  const known = new Map<string, StoredVersion>();
  for (const row of rows) {
    if (row.head) head = { seq: row.seq, hash: row.chain_hash };
    else known.set(row.id, { seq: row.seq, recordHash: row.record_hash });
  }
  return { head, known };
}

async function quarantinePg(
  q: Queries,
  p: Extract<PreparedRecord, { valid: false }>,
  context: PageContext,
  now: number,
): Promise<boolean> {
  const fresh = await insertQuarantineIn(q, quarantineRowOf(p, context, now));
  const narrower = quarantineNarrowing(p, fresh, context);
  if (narrower) {
    // greatest/least COLLATE "C": SQLite's max/min compare text bytewise.
    await q.run(
      sql`UPDATE quarantine SET day_min = greatest(coalesce(day_min, ${narrower.from}) COLLATE "C", ${narrower.from}),
         day_max = least(coalesce(day_max, ${narrower.to}) COLLATE "C", ${narrower.to})
       WHERE raw_hash = ${p.hash} AND server_day IS NULL`,
    );
  }
  return fresh;
}

async function insertPgRevision(
  q: Queries,
  columns: RecordColumns,
  context: PageContext,
  now: number,
): Promise<boolean> {
  // audit_log_revisions has no foreign key: a revision of a record still waiting for the COPY may go first.
  const changed = await q.run(
    sql`INSERT INTO audit_log_revisions (audit_log_id, raw, record_hash, seen_at, sync_run_id)
     VALUES (${columns.id}, ${columns.raw}, ${columns.recordHash}, ${now}, ${context.syncRunId})
     ON CONFLICT (audit_log_id, record_hash) DO NOTHING`,
  );
  return changed > 0;
}

/**
 * A batch's records on `q`, inside its transaction: dedupe on id (against the store and earlier pages of
 * the batch), revisions, quarantine, the hash chain, the rule diffs of new records. Pages are tallied in
 * order with storePage; write() then inserts what they added. Rows that reference audit_logs (listed
 * days, the plan's head) are written after write().
 */
class PgBatchWriter implements BatchWriter {
  private readonly rows: RecordColumns[] = [];
  private readonly diffs: RecordDiff[] = [];
  private readonly headBefore: ChainHead;

  private constructor(
    private readonly q: Queries,
    private head: ChainHead,
    /** Ids stored before this batch, and those the batch itself inserts (an id twice in one batch). */
    private readonly known: Map<string, StoredVersion>,
    private readonly now: number,
  ) {
    this.headBefore = head;
  }

  /** Reads the chain head and which of the pages' ids the store holds already. */
  static async open(
    q: Queries,
    pages: readonly (readonly PreparedRecord[])[],
    now: number,
  ): Promise<PgBatchWriter> {
    const ids = new Set<string>();
    for (const prepared of pages) for (const p of prepared) if (p.valid) ids.add(p.columns.id);
    const { head, known } = await headAndStoredVersions(q, [...ids]);
    return new PgBatchWriter(q, head, known, now);
  }

  heads(): { before: ChainHead; after: ChainHead } {
    return { before: this.headBefore, after: this.head };
  }

  /** Tallies one page, after the batch's earlier pages; its new records wait for write(). */
  async storePage(prepared: readonly PreparedRecord[], context: PageContext): Promise<PageWriteResult> {
    const now = context.now ?? this.now;
    const tally = new PageTally(this.head, { now, syncRunId: context.syncRunId });
    for (const p of prepared) {
      if (!p.valid) {
        tally.quarantined(p, await quarantinePg(this.q, p, context, now));
        continue;
      }
      const existing = this.known.get(p.columns.id);
      if (existing === undefined) {
        const columns = tally.link(p);
        this.rows.push(columns);
        tally.stored(p);
        this.known.set(columns.id, { seq: columns.seq, recordHash: columns.recordHash });
        continue;
      }
      if (!tally.alreadyStored(p, existing)) continue;
      tally.revision(p, existing, await insertPgRevision(this.q, p.columns, context, now));
    }
    for (const { id, diff } of tally.inserted) if (diff !== null) this.diffs.push({ id, diff });
    this.head = tally.head;
    return tally.result;
  }

  /** Inserts the records the pages added, then their rule diffs, and moves the chain head's meta rows. */
  async write(): Promise<void> {
    if (this.rows.length === 0) return;
    await this.q.insertRows("audit_logs", RECORD_COLUMN_NAMES, this.rows.map(recordRow));
    // Both halves of the chain head in one statement.
    await this.q.run(
      sql`INSERT INTO meta (key, value, updated_at)
          VALUES (${CHAIN_HEAD_SEQ_KEY}, ${String(this.head.seq)}, ${this.now}),
            (${CHAIN_HEAD_HASH_KEY}, ${this.head.hash}, ${this.now})
          ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    );
    await insertRuleDiffRows(this.q, this.diffs);
    this.rows.length = 0;
    this.diffs.length = 0;
  }
}

export const openPgBatchWriter: (...args: Parameters<typeof PgBatchWriter.open>) => Promise<BatchWriter> = (
  ...args
) => PgBatchWriter.open(...args);
