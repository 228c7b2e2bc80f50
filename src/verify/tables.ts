// `flagtrail verify` beyond the record chain: stored revisions, the quarantine and coverage tables
// against the digests the writer keeps in meta; the meta head and the head's HMAC are src/chainChecks.ts's.

import { checkQuarantineEnd, compareDigest, type DigestOutcome, missingDigestError } from "../chainChecks.ts";
import {
  coverageDigestSchema,
  EMPTY_COVERAGE_DIGEST,
  EMPTY_QUARANTINE_DIGEST,
  foldCoverageRow,
  foldQuarantineRow,
  quarantineDigestSchema,
} from "../digests.ts";
import { IntegrityError } from "../errors.ts";
import { recordHash } from "../hash.ts";
import type { ChainMeta, ChainReader } from "../store/chainRead.ts";
import { COVERAGE_DIGEST_KEY, QUARANTINE_DIGEST_KEY } from "../store/digests.ts";
import { parseStoredJson } from "../storedJson.ts";
import { pacer } from "./pace.ts";

export interface TableCheck {
  rows: number;
  digest: DigestOutcome;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Each stored later version of a record: its hash, and that it is a version of that record. */
export async function checkRevisions(reader: ChainReader): Promise<number> {
  let count = 0;
  const pause = pacer();
  for await (const row of reader.revisions()) {
    await pause();
    const where = `revision ${row.id} of record ${row.audit_log_id}`;
    const raw = parseJson(row.raw);
    if (raw === undefined)
      throw new IntegrityError(`${where}: its raw record is not valid JSON`, `revision-${row.id}-json`);
    if (recordHash(raw) !== row.record_hash)
      throw new IntegrityError(
        `${where}: record_hash differs from the hash of its raw record`,
        `revision-${row.id}-hash`,
      );
    if (raw === null || typeof raw !== "object" || (raw as { id?: unknown }).id !== row.audit_log_id)
      throw new IntegrityError(`${where}: its raw record has another id`, `revision-${row.id}-id`);
    count += 1;
  }
  return count;
}

/** Quarantine rows: each raw_hash against its raw record, and the table against meta's digest. */
export async function checkQuarantine(reader: ChainReader, meta: ChainMeta): Promise<TableCheck> {
  let state = EMPTY_QUARANTINE_DIGEST;
  const pause = pacer();
  for await (const row of reader.quarantine()) {
    await pause();
    const raw = parseJson(row.raw);
    if (raw === undefined || recordHash(raw) !== row.raw_hash)
      throw new IntegrityError(
        `quarantine row ${row.id}: raw_hash differs from the hash of its raw record`,
        `quarantine-${row.id}-hash`,
      );
    state = foldQuarantineRow(state, row);
  }
  checkQuarantineEnd(meta.quarantineDigest, meta.quarantineLast); // rows added: the sync's sentence
  const digest = compareDigest("quarantine", QUARANTINE_DIGEST_KEY, meta.quarantineDigest, state, (text) =>
    parseStoredJson(quarantineDigestSchema, text),
  );
  return { rows: state.rows, digest };
}

/** Coverage rows against meta's digest (nothing else determines them: they are the server's counts). */
export async function checkCoverage(reader: ChainReader, meta: ChainMeta): Promise<TableCheck> {
  let state = EMPTY_COVERAGE_DIGEST;
  const pause = pacer();
  for await (const row of reader.coverage()) {
    await pause();
    state = foldCoverageRow(state, row);
  }
  const digest = compareDigest("coverage", COVERAGE_DIGEST_KEY, meta.coverageDigest, state, (text) =>
    parseStoredJson(coverageDigestSchema, text),
  );
  return { rows: state.rows, digest };
}

/**
 * Every sync writes both digests (an empty table has the empty digest), and stores written before they
 * existed get them on their first sync, which verify's read-only open demands anyway. So a missing
 * digest was removed — unless the store holds nothing at all (never synced: no records, no rows, no
 * other digest, no head in meta, no signature), where there is nothing to protect.
 */
export function requireDigests(
  meta: ChainMeta,
  records: number,
  quarantine: TableCheck,
  coverage: TableCheck,
): void {
  const missing = [
    quarantine.digest === "absent" ? QUARANTINE_DIGEST_KEY : null,
    coverage.digest === "absent" ? COVERAGE_DIGEST_KEY : null,
  ].filter((m) => m !== null);
  if (missing.length === 0) return;
  const pristine =
    missing.length === 2 &&
    records === 0 &&
    quarantine.rows === 0 &&
    coverage.rows === 0 &&
    meta.headSeq === null &&
    meta.headSignature === null;
  if (pristine) return;
  throw missingDigestError(missing);
}
