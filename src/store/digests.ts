// What the record chain does not cover (verify's checks: docs/reports.md), kept in `meta` in the
// transaction that changes the rows (src/digests.ts folds them); a missing one starts from the rows present.
import {
  type CoverageDigest,
  type CoverageRow,
  EMPTY_QUARANTINE_DIGEST,
  foldCoverageRows,
  foldQuarantineRow,
  type QuarantineDigest,
  type QuarantineRow,
  quarantineDigestSchema,
} from "../digests.ts";
import type { QuarantineInsert } from "../records/quarantineRows.ts";
import { parseStoredJson } from "../storedJson.ts";
import { type MetaEntry, readMetaValueIn, writeMetaValueQuery, writeMetaValuesQuery } from "./metaValues.ts";
import { type Queries, sql } from "./query.ts";

/** meta key: JSON {rows, lastId, digest} — a hash chain over quarantine rows in id order. */
export const QUARANTINE_DIGEST_KEY = "chain:quarantine";
/** meta key: JSON {rows, digest} — a hash chain over coverage rows in (filter_key, day) order. */
export const COVERAGE_DIGEST_KEY = "chain:coverage";
/** meta key: hex HMAC-SHA256 of the chain head (signChainHead). The key itself is never stored. */
export const CHAIN_HEAD_SIGNATURE_KEY = "chain:head_signature";
/** meta key: the seq the signature was made over (a sync without the key moves the head on after it). */
export const CHAIN_HEAD_SIGNED_SEQ_KEY = "chain:head_signed_seq";

export const QUARANTINE_COLUMNS =
  "id, record_id, raw, raw_hash, issues, request_path, received_at, sync_run_id";
export const COVERAGE_COLUMNS =
  "filter_key, day, server_total, local_count, checked_at, sync_run_id, day_closed, quarantined_count";

/** Every coverage row, in byte order (as SQLite's BINARY sorts): the order the digest folds them in. */
export const COVERAGE_ROWS = sql`SELECT ${sql.raw(COVERAGE_COLUMNS)} FROM coverage
  ORDER BY filter_key COLLATE "binary", day COLLATE "binary"`;
const writeDigest = (key: string, digest: QuarantineDigest | CoverageDigest) =>
  writeMetaValueQuery(key, JSON.stringify(digest), Date.now());

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

/** Folds the quarantine rows added since the last call in; writes the coverage digest too when missing. */
export async function updateQuarantineDigestIn(q: Queries): Promise<void> {
  const quarantineDigest = (await readMetaValueIn(q, QUARANTINE_DIGEST_KEY)) ?? null;
  const coverageDigest = (await readMetaValueIn(q, COVERAGE_DIGEST_KEY)) ?? null;
  const entries = await digestEntriesIn(q, { quarantineDigest, coverageDigest }, true);
  await q.run(writeMetaValuesQuery(entries, Date.now()));
}

/**
 * The digests a write moves, from meta's texts read in its transaction: the quarantine digest with the
 * rows above its lastId folded in, when rows were added or none is stored (a missing or unreadable one
 * folds every row: verify covers the table from the first write); the coverage digest when none is stored.
 */
export async function digestEntriesIn(
  q: Queries,
  stored: { quarantineDigest: string | null; coverageDigest: string | null },
  quarantineAdded: boolean,
): Promise<MetaEntry[]> {
  const entries: MetaEntry[] = [];
  if (quarantineAdded || stored.quarantineDigest === null) {
    const start = parseStoredJson(quarantineDigestSchema, stored.quarantineDigest ?? undefined);
    const rows = await q.all<QuarantineRow>(
      sql`SELECT ${sql.raw(QUARANTINE_COLUMNS)} FROM quarantine WHERE id > ${start?.lastId ?? 0} ORDER BY id`,
    );
    entries.push([
      QUARANTINE_DIGEST_KEY,
      JSON.stringify(rows.reduce(foldQuarantineRow, start ?? EMPTY_QUARANTINE_DIGEST)),
    ]);
  }
  if (stored.coverageDigest === null)
    entries.push([COVERAGE_DIGEST_KEY, JSON.stringify(await coverageDigestIn(q))]);
  return entries;
}

/** Every coverage row rehashed (one a day per filter set: small). */
const coverageDigestIn = async (q: Queries): Promise<CoverageDigest> =>
  foldCoverageRows(await q.all<CoverageRow>(COVERAGE_ROWS)).digest;

/** Writes the coverage digest: `folded` by the caller, or every row rehashed. */
export async function updateCoverageDigestIn(q: Queries, folded?: CoverageDigest): Promise<CoverageDigest> {
  const state = folded ?? (await coverageDigestIn(q));
  await q.run(writeDigest(COVERAGE_DIGEST_KEY, state));
  return state;
}
