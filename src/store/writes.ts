// The record writer on SQLite: record by record, synchronously, inside the sync batch's transaction
// (syncBatch.ts). What to write is PageTally's decision.
import type Database from "better-sqlite3";
import { CHAIN_GENESIS } from "../hash.ts";
import {
  type PageContext,
  PageTally,
  type PreparedRecord,
  type RecordColumns,
} from "../records/pageTally.ts";
import { type QuarantineInsert, quarantineNarrowing, quarantineRowOf } from "../records/quarantineRows.ts";
import { sqliteOf } from "./connection.ts";
import type { Dialect } from "./dialect.ts";
import type { Store } from "./open.ts";
import { type SQL, sql, sqliteQueriesOn } from "./query.ts";
import type { BatchWriter } from "./syncBatch.ts";

export type ChainHead = { seq: number; hash: string };

/** A stored record's changed content, kept once per version (both engines). */
export const revisionQuery = (c: RecordColumns, now: number, runId: number | null): SQL =>
  sql`INSERT INTO audit_log_revisions (audit_log_id, raw, record_hash, seen_at, sync_run_id)
    VALUES (${c.id}, ${c.raw}, ${c.recordHash}, ${now}, ${runId})
    ON CONFLICT (audit_log_id, record_hash) DO NOTHING`;

/** A quarantined record seen again in a narrower request learns the narrower day range (coverage). */
export function narrowQuarantineQuery(
  dialect: Dialect,
  hash: string,
  range: { from: string; to: string },
): SQL {
  // PostgreSQL's greatest/least COLLATE "C" compare text bytewise, as SQLite's max/min do.
  const [greatest, least, bytewise] =
    dialect === "sqlite" ? [sql`max`, sql`min`, sql``] : [sql`greatest`, sql`least`, sql` COLLATE "C"`];
  return sql`UPDATE quarantine
    SET day_min = ${greatest}(coalesce(day_min, ${range.from})${bytewise}, ${range.from}),
      day_max = ${least}(coalesce(day_max, ${range.to})${bytewise}, ${range.to})
    WHERE raw_hash = ${hash} AND server_day IS NULL`;
}

/** A batch writer's statements, prepared once; rarer ones go through `now`. */
function statementsOf(sqlite: Database.Database) {
  return {
    now: sqliteQueriesOn(sqlite),
    selectExisting: sqlite.prepare<[string], { seq: number; record_hash: string }>(
      "SELECT seq, record_hash FROM audit_logs WHERE id = ?",
    ),
    selectHead: sqlite.prepare<[], { seq: number; chain_hash: string }>(
      "SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1",
    ),
    // The columns that repeat the record's fields are generated from raw_data.
    insertRecord: sqlite.prepare(
      `INSERT INTO audit_logs (raw_data, occurred_at, server_day, record_hash_bytes, seq, chain_hash_bytes,
         first_seen_at, sync_run_id)
       VALUES (?, ?, ?, unhex(?), ?, unhex(?), ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    ),
    insertQuarantine: sqlite.prepare<[QuarantineInsert]>(
      `INSERT OR IGNORE INTO quarantine (record_id, raw, raw_hash, issues, request_path, received_at,
         sync_run_id, server_day, day_min, day_max)
       VALUES (@recordId, @raw, @rawHash, @issues, @requestPath, @receivedAt, @syncRunId, @serverDay,
         @dayMin, @dayMax)`,
    ),
  };
}
type Statements = ReturnType<typeof statementsOf>;

function readChainHead(st: Statements): ChainHead {
  const row = st.selectHead.get();
  return row ? { seq: row.seq, hash: row.chain_hash } : { seq: 0, hash: CHAIN_GENESIS };
}

/** By position, in the INSERT's column order: named parameters cost ~5.5 µs a row against ~3 µs. */
function insertRecord(st: Statements, c: RecordColumns): number {
  return st.insertRecord.run(
    [c.raw, c.occurredAt, c.serverDay, c.recordHash],
    [c.seq, c.chainHash, c.firstSeenAt, c.syncRunId],
  ).changes;
}

/** A page's records, in the batch's transaction: dedupe on id, revisions, quarantine, the hash chain. */
function storePrepared(st: Statements, prepared: readonly PreparedRecord[], context: PageContext): PageTally {
  const now = context.now ?? Date.now();
  const tally = new PageTally(readChainHead(st), { now, syncRunId: context.syncRunId });

  for (const p of prepared) {
    if (!p.valid) {
      const fresh = st.insertQuarantine.run(quarantineRowOf(p, context, now)).changes > 0;
      const narrower = quarantineNarrowing(p, fresh, context);
      if (narrower) st.now.run(narrowQuarantineQuery("sqlite", p.hash, narrower));
      tally.quarantined(p, fresh);
      continue;
    }
    // Insert first: in a backfill nearly every record is new, and the id's index answers both questions.
    if (insertRecord(st, tally.link(p)) > 0) {
      tally.stored(p);
      continue;
    }
    const row = st.selectExisting.get(p.columns.id);
    if (row === undefined) throw new Error(`audit record ${p.columns.id} neither stored nor present`);
    const existing = { seq: row.seq, recordHash: row.record_hash };
    if (!tally.alreadyStored(p, existing)) continue;
    const fresh = st.now.run(revisionQuery(p.columns, now, context.syncRunId)) > 0;
    tally.revision(p, existing, fresh);
  }
  return tally;
}

/** The sync batch's writer on SQLite (syncBatch.ts): each page stored at once, in the batch's transaction. */
export function sqliteBatchWriter(store: Store): BatchWriter {
  const st = statementsOf(sqliteOf(store));
  const before = readChainHead(st);
  return {
    storePage: async (prepared, context) => storePrepared(st, prepared, context),
    write: async () => {},
    heads: () => ({ before, after: readChainHead(st) }),
  };
}
