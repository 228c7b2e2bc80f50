// What the hash chain over audit_logs does not cover, covered on its own: a digest of the quarantine
// table and one of the coverage table, kept in `meta` by the writer and recomputed by `flagtrail
// verify`; and, with FLAGTRAIL_SIGNING_KEY, an HMAC of the chain head, so that records cut off the end
// together with a rewritten meta head are caught without a report manifest.
//
// For the writer (src/store/writes.ts, syncBatch.ts, coverageCounts.ts), inside the transaction that changes the rows:
//   - after inserting quarantine rows:   updateQuarantineDigest(sqlite)   — folds only the new rows
//   - after writing coverage rows:       updateCoverageDigest(sqlite)     — rehashes the table (one row a
//                                        day per filter set: small); call once per batch of days
//   - after moving the chain head:       writeChainHeadSignature(sqlite, process.env.FLAGTRAIL_SIGNING_KEY)
//                                        (a no-op without a key; also worth calling once per run, so a
//                                        store first synced without the key gets signed)
//   - updateQuarantineDigest, called by every sync batch, also writes the coverage digest when it is
//     missing: a synced store always holds both (an empty table has the empty digest)
// A key that does not exist yet is created from the rows present (trust on first use), so stores written
// before these keys existed get them on their next sync. verify treats a missing digest as removed unless
// the store holds nothing at all (no records, rows, digests or signature: never synced).
//
// Not covered: quarantine.server_day (derived from the raw `date`, and filled in later for old rows).
import type Database from "better-sqlite3";
import {
  type CoverageDigest,
  type CoverageRow,
  EMPTY_COVERAGE_DIGEST,
  EMPTY_QUARANTINE_DIGEST,
  foldCoverageRow,
  foldQuarantineRow,
  parseDigest,
  type QuarantineDigest,
  type QuarantineRow,
  quarantineDigestSchema,
  signChainHead,
} from "../digests.ts";
import { readMetaValueIn, writeMetaValueQuery } from "./metaValues.ts";
import type { QuarantineInsert } from "./quarantineRows.ts";
import { type Queries, sql } from "./query.ts";

// The sync's batch commit (syncBatch.ts) signs through here.
export { signChainHead };

/** meta key: JSON {rows, lastId, digest} — a hash chain over quarantine rows in id order. */
export const QUARANTINE_DIGEST_KEY = "chain:quarantine";
/** meta key: JSON {rows, digest} — a hash chain over coverage rows in (filter_key, day) order. */
export const COVERAGE_DIGEST_KEY = "chain:coverage";
/** meta key: hex HMAC-SHA256 of the chain head (signChainHead). The key itself is never stored. */
export const CHAIN_HEAD_SIGNATURE_KEY = "chain:head_signature";

export const QUARANTINE_COLUMNS =
  "id, record_id, raw, raw_hash, issues, request_path, received_at, sync_run_id";
export const COVERAGE_COLUMNS =
  "filter_key, day, server_total, local_count, checked_at, sync_run_id, day_closed, quarantined_count";

// ---- the writer's side: store-internal, synchronous, inside the writer's transaction ----------------

function readMeta(sqlite: Database.Database, key: string): string | undefined {
  return sqlite.prepare<[string], string>("SELECT value FROM meta WHERE key = ?").pluck().get(key);
}

function writeMeta(sqlite: Database.Database, key: string, value: string): void {
  sqlite
    .prepare(
      `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    )
    .run(key, value, Date.now());
}

/** Folds quarantine rows added since the last call into meta QUARANTINE_DIGEST_KEY. */
export function updateQuarantineDigest(sqlite: Database.Database): QuarantineDigest {
  const stored = readMeta(sqlite, QUARANTINE_DIGEST_KEY);
  // A missing (or unreadable) digest starts over from every row present.
  let state = parseDigest(quarantineDigestSchema, stored) ?? EMPTY_QUARANTINE_DIGEST;
  const rows = sqlite
    .prepare<[number], QuarantineRow>(`SELECT ${QUARANTINE_COLUMNS} FROM quarantine WHERE id > ? ORDER BY id`)
    .iterate(state.lastId);
  for (const row of rows) state = foldQuarantineRow(state, row);
  writeMeta(sqlite, QUARANTINE_DIGEST_KEY, JSON.stringify(state));
  // With it the coverage digest, so a store any writer touched holds both (verify: missing = removed).
  ensureCoverageDigest(sqlite);
  return state;
}

/** Recomputes meta COVERAGE_DIGEST_KEY from every coverage row. */
export function updateCoverageDigest(sqlite: Database.Database): CoverageDigest {
  let state = EMPTY_COVERAGE_DIGEST;
  const rows = sqlite
    .prepare<[], CoverageRow>(`SELECT ${COVERAGE_COLUMNS} FROM coverage ORDER BY filter_key, day`)
    .iterate();
  for (const row of rows) state = foldCoverageRow(state, row);
  writeMeta(sqlite, COVERAGE_DIGEST_KEY, JSON.stringify(state));
  return state;
}

/**
 * Writes meta COVERAGE_DIGEST_KEY from the rows present when it is missing. Every batch of a sync calls
 * it (with updateQuarantineDigest), so a synced store holds both digests even before it has coverage
 * rows, and verify can treat a missing digest as removed.
 */
function ensureCoverageDigest(sqlite: Database.Database): void {
  if (readMeta(sqlite, COVERAGE_DIGEST_KEY) === undefined) updateCoverageDigest(sqlite);
}

/**
 * Signs the current chain head (the last record of audit_logs) into meta CHAIN_HEAD_SIGNATURE_KEY when
 * a key is given; without one, does nothing (an existing signature then goes stale, and verify with the
 * key says so). Returns whether it signed.
 */
export function writeChainHeadSignature(sqlite: Database.Database, key: string | undefined): boolean {
  if (!key) return false;
  const head = sqlite
    .prepare<[], { seq: number; chainHash: string }>(
      "SELECT seq, chain_hash AS chainHash FROM audit_logs ORDER BY seq DESC LIMIT 1",
    )
    .get();
  if (!head) return false;
  writeMeta(sqlite, CHAIN_HEAD_SIGNATURE_KEY, signChainHead(head, key));
  return true;
}

// ---- the same, in one query text for either engine, inside a transaction's Queries ------------------
// (The synchronous ones above serve the SQLite record writer, which cannot await inside its
// better-sqlite3 transaction.)

/** Inserts one quarantined item unless its raw hash is there already; returns whether it was new. */
export async function insertQuarantineIn(q: Queries, row: QuarantineInsert): Promise<boolean> {
  const changed = await q.run(
    sql`INSERT INTO quarantine (record_id, raw, raw_hash, issues, request_path, received_at, sync_run_id,
          server_day, day_min, day_max)
        VALUES (${row.recordId}, ${row.raw}, ${row.rawHash}, ${row.issues}, ${row.requestPath}, ${row.receivedAt},
          ${row.syncRunId}, ${row.serverDay}, ${row.dayMin}, ${row.dayMax})
        ON CONFLICT (raw_hash) DO NOTHING`,
  );
  return changed > 0;
}

/** updateQuarantineDigest in a transaction of either engine. */
export async function updateQuarantineDigestIn(q: Queries): Promise<QuarantineDigest> {
  let state =
    parseDigest(quarantineDigestSchema, await readMetaValueIn(q, QUARANTINE_DIGEST_KEY)) ??
    EMPTY_QUARANTINE_DIGEST;
  const rows = await q.all<QuarantineRow>(
    sql`SELECT ${sql.raw(QUARANTINE_COLUMNS)} FROM quarantine WHERE id > ${state.lastId} ORDER BY id`,
  );
  for (const row of rows) state = foldQuarantineRow(state, row);
  await q.run(writeMetaValueQuery(QUARANTINE_DIGEST_KEY, JSON.stringify(state), Date.now()));
  if ((await readMetaValueIn(q, COVERAGE_DIGEST_KEY)) === undefined) await updateCoverageDigestIn(q);
  return state;
}

/** updateCoverageDigest in a transaction of either engine (rows in byte order, as SQLite's BINARY sorts). */
export async function updateCoverageDigestIn(q: Queries): Promise<CoverageDigest> {
  let state = EMPTY_COVERAGE_DIGEST;
  const rows = await q.all<CoverageRow>(
    sql`SELECT ${sql.raw(COVERAGE_COLUMNS)} FROM coverage ORDER BY filter_key COLLATE "binary", day COLLATE "binary"`,
  );
  for (const row of rows) state = foldCoverageRow(state, row);
  await q.run(writeMetaValueQuery(COVERAGE_DIGEST_KEY, JSON.stringify(state), Date.now()));
  return state;
}
