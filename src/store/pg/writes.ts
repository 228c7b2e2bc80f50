// The sync batch's record writer on PostgreSQL (SQLite's: ../writes.ts). A batch costs a fixed number of
// round trips: the chain head and its pages' ids in one query, its new records in one COPY once every page
// is tallied. Quarantined records and revisions are rare and go in one by one.
import { CHAIN_GENESIS } from "../../hash.ts";
import {
  type PageContext,
  PageTally,
  type PreparedRecord,
  type RecordColumns,
  type StoredVersion,
} from "../../records/pageTally.ts";
import { quarantineNarrowing, quarantineRowOf } from "../../records/quarantineRows.ts";
import type { ChainRecord } from "../chainRead.ts";
import { insertQuarantineIn } from "../digests.ts";
import { type Queries, sql } from "../query.ts";
import type { BatchWriter } from "../syncBatch.ts";
import { columnName, columnsOn } from "../tableKinds.ts";
import { TABLES } from "../tables.ts";
import { type ChainHead, narrowQuarantineQuery, revisionQuery } from "../writes.ts";

/** audit_logs' stored columns (tables.ts) as the COPY lists them; recordRow's values are in this order. */
export const RECORD_COLUMN_NAMES = columnsOn(TABLES.auditLogs, "pg")
  .filter(([, column]) => column.options.generated === undefined)
  .map(([key]) => columnName(key));

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

/** Opens the batch's writer (one round trip); pages are tallied in order, write() COPYs their records. */
export async function openPgBatchWriter(
  q: Queries,
  pages: readonly { prepared: readonly PreparedRecord[] }[],
  now: number,
): Promise<BatchWriter> {
  const ids = new Set<string>();
  for (const { prepared } of pages) for (const p of prepared) if (p.valid) ids.add(p.columns.id);
  const rows = await q.all<
    Pick<ChainRecord, "id" | "seq" | "record_hash" | "chain_hash"> & { head: boolean }
  >(
    sql`(SELECT id, seq, record_hash, chain_hash, true AS head FROM audit_logs ORDER BY seq DESC LIMIT 1)
        UNION ALL
        SELECT id, seq, record_hash, chain_hash, false FROM audit_logs
        WHERE id = ANY(${sql.param([...ids])})`,
  );
  let head: ChainHead = { seq: 0, hash: CHAIN_GENESIS };
  /** Ids stored before this batch, and those the batch itself inserts (an id twice in one batch). */
  const known = new Map<string, StoredVersion>();
  for (const row of rows) {
    if (row.head) head = { seq: row.seq, hash: row.chain_hash };
    else known.set(row.id, { seq: row.seq, recordHash: row.record_hash });
  }
  const before = head;
  const added: RecordColumns[] = [];

  async function storePage(prepared: readonly PreparedRecord[], context: PageContext): Promise<PageTally> {
    const at = context.now ?? now;
    const tally = new PageTally(head, { now: at, syncRunId: context.syncRunId });
    for (const p of prepared) {
      if (!p.valid) {
        const fresh = await insertQuarantineIn(q, quarantineRowOf(p, context, at));
        const narrower = quarantineNarrowing(p, fresh, context);
        if (narrower) await q.run(narrowQuarantineQuery(q.dialect, p.hash, narrower));
        tally.quarantined(p, fresh);
        continue;
      }
      const existing = known.get(p.columns.id);
      if (existing === undefined) {
        const columns = tally.link(p);
        added.push(columns);
        tally.stored(p);
        known.set(columns.id, { seq: columns.seq, recordHash: columns.recordHash });
        continue;
      }
      if (!tally.alreadyStored(p, existing)) continue;
      // audit_log_revisions has no foreign key: a revision of a record waiting for the COPY may go first.
      tally.revision(p, existing, (await q.run(revisionQuery(p.columns, at, context.syncRunId))) > 0);
    }
    head = tally.head;
    return tally;
  }

  return {
    storePage,
    write: async () => {
      if (added.length === 0) return;
      await q.insertRows("audit_logs", RECORD_COLUMN_NAMES, added.map(recordRow));
      added.length = 0;
    },
    heads: () => ({ before, after: head }),
  };
}
