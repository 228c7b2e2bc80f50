// `flagtrail verify` beyond the record chain: stored revisions, the quarantine and coverage tables
// against the digests the writer keeps in meta, the meta head, and the head's HMAC when there is a key.

import {
  type CoverageDigest,
  checkChainHeadSignature,
  coverageDigestSchema,
  EMPTY_COVERAGE_DIGEST,
  EMPTY_QUARANTINE_DIGEST,
  foldCoverageRow,
  foldQuarantineRow,
  type QuarantineDigest,
  quarantineDigestSchema,
} from "../digests.ts";
import { IntegrityError } from "../errors.ts";
import { CHAIN_GENESIS, recordHash } from "../hash.ts";
import type { ChainMeta, ChainReader } from "../store/chainRead.ts";
import { CHAIN_HEAD_SIGNATURE_KEY, COVERAGE_DIGEST_KEY, QUARANTINE_DIGEST_KEY } from "../store/digests.ts";
import { parseStoredJson } from "../storedJson.ts";
import { pacer } from "./pace.ts";
import { type ChainHead, short } from "./records.ts";

/**
 * How a table compared with its digest: "matched", or "absent" (no digest in meta: allowed only of a
 * store that holds nothing at all, see requireDigests).
 */
type DigestOutcome = "matched" | "absent";

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

function compareDigest(
  table: string,
  key: string,
  stored: string | null,
  computed: QuarantineDigest | CoverageDigest,
  parse: (text: string) => { rows: number; digest: string } | null,
): DigestOutcome {
  if (stored === null) return "absent";
  const recorded = parse(stored);
  if (recorded === null)
    throw new IntegrityError(`meta ${key} is not a ${table} digest: it was edited`, `${table}-digest-edited`);
  if (recorded.rows !== computed.rows) {
    throw new IntegrityError(
      `the ${table} table holds ${computed.rows} rows, its digest in meta (${key}) covers ${recorded.rows}: ` +
        "rows were removed or added outside flagtrail",
      `${table}-rows`,
    );
  }
  if (recorded.digest !== computed.digest) {
    throw new IntegrityError(
      `the ${table} table's rows differ from its digest in meta (${key}): a row was edited outside flagtrail`,
      `${table}-digest`,
    );
  }
  return "matched";
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
    quarantine.digest === "absent" ? `${QUARANTINE_DIGEST_KEY} (quarantine)` : null,
    coverage.digest === "absent" ? `${COVERAGE_DIGEST_KEY} (coverage)` : null,
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
  throw new IntegrityError(
    `the digest in meta ${missing.join(" and ")} is missing from a store that has been synced, and every sync ` +
      "writes it: it was removed (with whatever rows it would have shown were changed)",
    `digest-missing-${missing.length === 2 ? "both" : quarantine.digest === "absent" ? "quarantine" : "coverage"}`,
  );
}

/** The writer mirrors the head in meta: records cut off the end of the chain show up here. */
export function checkMetaHead(meta: ChainMeta, head: ChainHead | null): void {
  if (meta.headSeq === null || meta.headHash === null) return;
  if (Number(meta.headSeq) !== (head?.seq ?? 0) || meta.headHash !== (head?.chainHash ?? CHAIN_GENESIS)) {
    throw new IntegrityError(
      `the chain head recorded in meta (seq ${meta.headSeq}, ${short(meta.headHash)}) is not the last stored record ` +
        `(${head ? `seq ${head.seq}, ${short(head.chainHash)}` : "no records"}): records were removed from or added to the end`,
      "meta-head",
    );
  }
}

/**
 * With a key, the last record must carry the head signature the writer stored: records cut off the end
 * cannot be re-signed without the key, even when meta's head was rewritten to match.
 */
export function checkHeadSignature(meta: ChainMeta, head: ChainHead | null, key: string): void {
  if (head === null) {
    if (meta.headSignature !== null)
      throw new IntegrityError(
        "meta holds a signed chain head but the store has no records: they were removed",
        "head-signature-no-records",
      );
    return;
  }
  if (meta.headSignature === null) {
    throw new IntegrityError(
      `the chain head is not signed (meta ${CHAIN_HEAD_SIGNATURE_KEY} is missing) but FLAGTRAIL_SIGNING_KEY is set: ` +
        "the signature was removed, or the store was last written without the key (a sync with the key signs it)",
      "head-signature-missing",
    );
  }
  if (!checkChainHeadSignature(head, meta.headSignature, key)) {
    throw new IntegrityError(
      `the chain head's HMAC-SHA256 signature does not match the last record (seq ${head.seq}, ${short(head.chainHash)}): ` +
        "records were removed from or added to the end, or the key is not the one the store was signed with",
      "head-signature",
    );
  }
}
