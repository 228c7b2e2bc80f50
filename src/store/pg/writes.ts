// The record writer on PostgreSQL (src/store/writes.ts on SQLite), inside the batch's transaction. The
// decisions (duplicate, revision, quarantine, the chain's next link, counters) are PageTally's, shared
// with SQLite; what differs is how the database is asked. A page costs a fixed number of round trips,
// not one per record: the page's ids are looked up with one query, the new records go in with one
// INSERT of column arrays (unnest: no bind-parameter limit however long the page), their rule diffs
// with one more. Quarantined records and revisions are rare and go in one by one.
import type pg from "pg";
import { CHAIN_GENESIS } from "../../hash.ts";
import { quarantineNarrowing, quarantineRowOf } from "../quarantineRows.ts";
import {
  CHAIN_HEAD_HASH_KEY,
  CHAIN_HEAD_SEQ_KEY,
  type PageContext,
  PageTally,
  type PageWriteResult,
  type PreparedRecord,
  type RecordColumns,
  type StoredVersion,
} from "../records.ts";
import { insertRuleDiffRows, type RecordDiff } from "../ruleDiffs.ts";
import { insertPgQuarantine, updatePgQuarantineDigest, writePgMeta } from "./quarantine.ts";
import { pgClientQueries } from "./queries.ts";
import { pgRows } from "./session.ts";

export type ChainHead = { seq: number; hash: string };

/** The current head of the hash chain (GENESIS at seq 0 on an empty store). */
export async function readPgChainHead(client: pg.ClientBase): Promise<ChainHead> {
  const [row] = await pgRows<{ seq: number; chain_hash: string }>(
    client,
    "SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1",
  );
  return row ? { seq: row.seq, hash: row.chain_hash } : { seq: 0, hash: CHAIN_GENESIS };
}

/** audit_logs' columns as the INSERT lists them, with each one's array type and value. */
const RECORD_COLUMNS: readonly [string, string, (c: RecordColumns) => unknown][] = [
  ["id", "text", (c) => c.id],
  ["name", "text", (c) => c.name],
  ["action_type", "text", (c) => c.actionType],
  ["change_log", "text", (c) => c.changeLog],
  ["updated_by", "text", (c) => c.updatedBy],
  ["updated_by_user_id", "text", (c) => c.updatedByUserId],
  ["modifier_email", "text", (c) => c.modifierEmail],
  ["occurred_at", "bigint", (c) => c.occurredAt],
  ["server_day", "text", (c) => c.serverDay],
  ["date_text", "text", (c) => c.dateText],
  ["time_text", "text", (c) => c.timeText],
  ["tags", "text", (c) => c.tags],
  ["raw", "text", (c) => c.raw],
  ["record_hash", "text", (c) => c.recordHash],
  ["seq", "bigint", (c) => c.seq],
  ["chain_hash", "text", (c) => c.chainHash],
  ["first_seen_at", "bigint", (c) => c.firstSeenAt],
  ["sync_run_id", "integer", (c) => c.syncRunId],
];

const INSERT_RECORDS = `INSERT INTO audit_logs (${RECORD_COLUMNS.map(([name]) => name).join(", ")})
  SELECT * FROM unnest(${RECORD_COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(", ")})`;

async function insertPgRecords(client: pg.ClientBase, rows: readonly RecordColumns[]): Promise<void> {
  if (rows.length === 0) return;
  await client.query(
    INSERT_RECORDS,
    RECORD_COLUMNS.map(([, , value]) => rows.map(value)),
  );
}

/** The stored version of each of the page's valid ids that the store holds already. */
async function storedVersions(
  client: pg.ClientBase,
  prepared: readonly PreparedRecord[],
): Promise<Map<string, StoredVersion>> {
  const ids = [...new Set(prepared.flatMap((p) => (p.valid ? [p.columns.id] : [])))];
  const known = new Map<string, StoredVersion>();
  if (ids.length === 0) return known;
  const rows = await pgRows<{ id: string; seq: number; record_hash: string }>(
    client,
    "SELECT id, seq, record_hash FROM audit_logs WHERE id = ANY($1)",
    [ids],
  );
  for (const row of rows) known.set(row.id, { seq: row.seq, recordHash: row.record_hash });
  return known;
}

async function quarantinePg(
  client: pg.ClientBase,
  p: Extract<PreparedRecord, { valid: false }>,
  context: PageContext,
  now: number,
): Promise<boolean> {
  const fresh = await insertPgQuarantine(client, quarantineRowOf(p, context, now));
  const narrower = quarantineNarrowing(p, fresh, context);
  if (narrower) {
    // greatest/least COLLATE "C": SQLite's max/min compare text bytewise.
    await client.query(
      `UPDATE quarantine SET day_min = greatest(coalesce(day_min, $1) COLLATE "C", $1),
         day_max = least(coalesce(day_max, $2) COLLATE "C", $2)
       WHERE raw_hash = $3 AND server_day IS NULL`,
      [narrower.from, narrower.to, p.hash],
    );
  }
  return fresh;
}

async function insertPgRevision(
  client: pg.ClientBase,
  columns: RecordColumns,
  context: PageContext,
  now: number,
): Promise<boolean> {
  const result = await client.query(
    `INSERT INTO audit_log_revisions (audit_log_id, raw, record_hash, seen_at, sync_run_id)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (audit_log_id, record_hash) DO NOTHING`,
    [columns.id, columns.raw, columns.recordHash, now, context.syncRunId],
  );
  return (result.rowCount ?? 0) > 0;
}

/**
 * Stores a page's prepared records on `client`, inside a transaction, after the chain `head`: dedupe on
 * id, revisions, quarantine, the hash chain, the rule diffs of new records. Returns the new head.
 */
export async function storePgPrepared(
  client: pg.ClientBase,
  prepared: readonly PreparedRecord[],
  context: PageContext,
  head: ChainHead,
): Promise<{ result: PageWriteResult; head: ChainHead }> {
  const now = context.now ?? Date.now();
  const tally = new PageTally(head, { now, syncRunId: context.syncRunId });
  // Ids stored before this page, and those the page itself inserts (an id twice in one page).
  const known = await storedVersions(client, prepared);
  const rows: RecordColumns[] = [];
  for (const p of prepared) {
    if (!p.valid) {
      tally.quarantined(p, await quarantinePg(client, p, context, now));
      continue;
    }
    const existing = known.get(p.columns.id);
    if (existing === undefined) {
      const columns = tally.link(p);
      rows.push(columns);
      tally.stored(p);
      known.set(columns.id, { seq: columns.seq, recordHash: columns.recordHash });
      continue;
    }
    if (!tally.alreadyStored(p, existing)) continue;
    tally.revision(p, existing, await insertPgRevision(client, p.columns, context, now));
  }
  await insertPgRecords(client, rows);
  const { result, inserted } = tally;
  // verify checks quarantine against this digest: a deleted or edited row is caught.
  if (result.quarantined > 0) await updatePgQuarantineDigest(client);
  if (inserted.length > 0) {
    await writePgMeta(client, CHAIN_HEAD_SEQ_KEY, String(tally.head.seq), now);
    await writePgMeta(client, CHAIN_HEAD_HASH_KEY, tally.head.hash, now);
    const diffs = inserted.flatMap(({ id, diff }): RecordDiff[] => (diff === null ? [] : [{ id, diff }]));
    await insertRuleDiffRows(pgClientQueries(client), diffs);
  }
  return { result, head: tally.head };
}
