// What `flagtrail verify` reads, all of it inside ONE read transaction: in WAL mode the first read after
// BEGIN pins a snapshot, so a sync committing pages meanwhile changes nothing verify sees (the meta head,
// the records, the quarantine and coverage digests all belong to the same moment). Exported functions
// are async: the PostgreSQL engine implements the same ones over an async driver (src/store/pg/chainRead.ts,
// REPEATABLE READ), chosen by the handle's engine.
import type Database from "better-sqlite3";
import { type Store, sqliteOf } from "./connection.ts";
import {
  CHAIN_HEAD_SIGNATURE_KEY,
  COVERAGE_COLUMNS,
  COVERAGE_DIGEST_KEY,
  type CoverageRow,
  QUARANTINE_COLUMNS,
  QUARANTINE_DIGEST_KEY,
  type QuarantineRow,
} from "./digests.ts";
import { type AnyStore, pgSide } from "./openAny.ts";
import { CHAIN_HEAD_HASH_KEY, CHAIN_HEAD_SEQ_KEY } from "./records.ts";
import { BACKFILL_MARK_KEY } from "./ruleDiffs.ts";

/** What the store keeps about its chain in `meta`, as stored (verify parses and judges it). */
export interface ChainMeta {
  headSeq: string | null;
  headHash: string | null;
  headSignature: string | null;
  quarantineDigest: string | null;
  coverageDigest: string | null;
  /** Records up to this seq have had their rule diff computed (0 when no backfill has run). */
  ruleDiffsBackfilledTo: number;
}

export interface StoredRuleChange {
  rule_id: string;
  rule_name: string | null;
  change: string;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  old_position: number | null;
  new_position: number | null;
}

/** One audit_logs row with its stored rule diff (summary and rule_changes rows). */
export interface ChainRecord {
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
  ruleChanges: StoredRuleChange[];
}

export interface RevisionRow {
  id: number;
  audit_log_id: string;
  raw: string;
  record_hash: string;
}

/** Reads of one snapshot; valid only inside the callback of readChainSnapshot. */
export interface ChainReader {
  meta(): Promise<ChainMeta>;
  /** audit_logs in seq order. */
  records(): AsyncIterable<ChainRecord>;
  /** audit_log_revisions in id order. */
  revisions(): AsyncIterable<RevisionRow>;
  /** quarantine in id order. */
  quarantine(): AsyncIterable<QuarantineRow>;
  /** coverage in (filter_key, day) order. */
  coverage(): AsyncIterable<CoverageRow>;
  /** chain_hash of the record at `seq`, or null when there is none. */
  chainHashAt(seq: number): Promise<string | null>;
}

async function* rowsOf<T>(iterator: IterableIterator<T>): AsyncGenerator<T> {
  // for…of closes the SQLite statement if the consumer stops early (the first broken link).
  for (const row of iterator) yield row;
}

/** The seq up to which rule diffs were backfilled, from meta's mark (0 when there is none or it is unreadable). */
function backfillMarkSeq(value: string | undefined): number {
  try {
    const mark = value === undefined ? null : (JSON.parse(value) as { seq?: unknown } | null);
    return typeof mark?.seq === "number" ? mark.seq : 0;
  } catch {
    return 0;
  }
}

/** The meta keys verify reads, on either engine. */
export const CHAIN_META_KEYS = [
  CHAIN_HEAD_SEQ_KEY,
  CHAIN_HEAD_HASH_KEY,
  CHAIN_HEAD_SIGNATURE_KEY,
  QUARANTINE_DIGEST_KEY,
  COVERAGE_DIGEST_KEY,
  BACKFILL_MARK_KEY,
] as const;

/** ChainMeta from the stored rows of CHAIN_META_KEYS (a key not stored reads as null). */
export function chainMetaFrom(rows: readonly { key: string; value: string }[]): ChainMeta {
  const meta = new Map(rows.map((r) => [r.key, r.value]));
  return {
    headSeq: meta.get(CHAIN_HEAD_SEQ_KEY) ?? null,
    headHash: meta.get(CHAIN_HEAD_HASH_KEY) ?? null,
    headSignature: meta.get(CHAIN_HEAD_SIGNATURE_KEY) ?? null,
    quarantineDigest: meta.get(QUARANTINE_DIGEST_KEY) ?? null,
    coverageDigest: meta.get(COVERAGE_DIGEST_KEY) ?? null,
    ruleDiffsBackfilledTo: backfillMarkSeq(meta.get(BACKFILL_MARK_KEY)),
  };
}

function metaOf(sqlite: Database.Database): ChainMeta {
  const rows = sqlite
    .prepare<string[], { key: string; value: string }>(
      `SELECT key, value FROM meta WHERE key IN (${CHAIN_META_KEYS.map(() => "?").join(", ")})`,
    )
    .all(...CHAIN_META_KEYS);
  return chainMetaFrom(rows);
}

function recordsOf(sqlite: Database.Database): AsyncGenerator<ChainRecord> {
  const storedChanges = sqlite.prepare<[string], StoredRuleChange>(
    `SELECT rule_id, rule_name, change, field, old_value, new_value, old_position, new_position
     FROM rule_changes WHERE audit_log_id = ? ORDER BY id`,
  );
  const hasChanges = sqlite
    .prepare<[string], number>("SELECT 1 FROM rule_changes WHERE audit_log_id = ? LIMIT 1")
    .pluck();
  const rows = sqlite
    .prepare<[], Omit<ChainRecord, "ruleChanges">>(
      `SELECT seq, id, name, action_type, change_log, updated_by, updated_by_user_id, modifier_email,
              date_text, time_text, tags, changes, raw, record_hash, chain_hash, occurred_at, server_day,
              s.summary, s.diff_version
       FROM audit_logs a LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
       ORDER BY seq`,
    )
    .iterate();
  async function* withRuleChanges(): AsyncGenerator<ChainRecord> {
    for await (const row of rowsOf(rows)) {
      // Only rule edits have rule diffs: other records cost one indexed lookup.
      const mayHaveDiff = row.summary !== null || row.changes.includes('"rules"');
      const ruleChanges =
        mayHaveDiff || hasChanges.get(row.id) !== undefined ? storedChanges.all(row.id) : [];
      yield { ...row, ruleChanges };
    }
  }
  return withRuleChanges();
}

function readerOf(sqlite: Database.Database): ChainReader {
  return {
    meta: async () => metaOf(sqlite),
    records: () => recordsOf(sqlite),
    revisions: () =>
      rowsOf(
        sqlite
          .prepare<[], RevisionRow>(
            "SELECT id, audit_log_id, raw, record_hash FROM audit_log_revisions ORDER BY id",
          )
          .iterate(),
      ),
    quarantine: () =>
      rowsOf(
        sqlite
          .prepare<[], QuarantineRow>(`SELECT ${QUARANTINE_COLUMNS} FROM quarantine ORDER BY id`)
          .iterate(),
      ),
    coverage: () =>
      rowsOf(
        sqlite
          .prepare<[], CoverageRow>(`SELECT ${COVERAGE_COLUMNS} FROM coverage ORDER BY filter_key, day`)
          .iterate(),
      ),
    chainHashAt: async (seq) =>
      sqlite.prepare<[number], string>("SELECT chain_hash FROM audit_logs WHERE seq = ?").pluck().get(seq) ??
      null,
  };
}

/**
 * Runs `read` with a reader over one consistent snapshot of the store, then ends the read transaction.
 * (On a connection already inside a transaction, that transaction is the snapshot.)
 */
export async function readChainSnapshot<T>(
  store: AnyStore,
  read: (reader: ChainReader) => Promise<T>,
): Promise<T> {
  if (store.engine === "postgres") return (await pgSide()).readPgChainSnapshot(store, read);
  return readSqliteSnapshot(store, read);
}

async function readSqliteSnapshot<T>(store: Store, read: (reader: ChainReader) => Promise<T>): Promise<T> {
  const sqlite = sqliteOf(store);
  if (sqlite.inTransaction) return read(readerOf(sqlite));
  sqlite.prepare("BEGIN").run();
  try {
    // BEGIN is deferred: this first read is what pins the snapshot, before anything else is read.
    sqlite.prepare("SELECT count(*) FROM meta").pluck().get();
    return await read(readerOf(sqlite));
  } finally {
    sqlite.prepare("COMMIT").run();
  }
}
