// The judgements over the record chain's end and the digests that both `flagtrail verify` and the sync make:
// verify after its walk, the sync in its write transaction BEFORE it writes. The sync links new records from
// the last stored row, folds new quarantine rows into the stored digest, rehashes coverage and re-signs the
// head: writing over a break would cover it (verify passes afterwards), so it refuses instead. The heads'
// signatures: headSignatures.ts; the entity chain's end: entityChainChecks.ts.

import {
  type CoverageDigest,
  coverageDigestSchema,
  type QuarantineDigest,
  quarantineDigestSchema,
} from "./digests.ts";
import { IntegrityError } from "./errors.ts";
import { CHAIN_GENESIS } from "./hash.ts";
import { type ChainHead, checkSignatureBeforeWrite, type SignedEnd, short } from "./headSignatures.ts";
import { parseStoredJson } from "./storedJson.ts";

/** The chain's end and digests as `meta` keeps them (null: not stored). */
export interface StoredChainEnd {
  headSeq: string | null;
  headHash: string | null;
  headSignature: string | null;
  quarantineDigest: string | null;
  coverageDigest: string | null;
}

/**
 * How a table compared with its digest: "matched", or "absent" (no digest in meta: allowed only of a
 * store that holds nothing at all, see requireDigests in src/verify/tables.ts).
 */
export type DigestOutcome = "matched" | "absent";

export function compareDigest(
  table: string,
  key: string,
  stored: string | null,
  computed: QuarantineDigest | CoverageDigest,
  parse: (text: string) => { rows: number; digest: string } | null,
): DigestOutcome {
  if (stored === null) return "absent";
  const recorded = storedDigest(table, key, stored, parse);
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

/** meta's digest text as `parse` reads it; text it cannot read was edited. */
function storedDigest<T>(table: string, key: string, stored: string, parse: (text: string) => T | null): T {
  const recorded = parse(stored);
  if (recorded === null)
    throw new IntegrityError(`meta ${key} is not a ${table} digest: it was edited`, `${table}-digest-edited`);
  return recorded;
}

/** The writer mirrors the head in meta: records cut off the end of the chain show up here. */
export function checkMetaHead(meta: StoredChainEnd, head: ChainHead | null): void {
  if (meta.headSeq === null || meta.headHash === null) return;
  if (Number(meta.headSeq) !== (head?.seq ?? 0) || meta.headHash !== (head?.chainHash ?? CHAIN_GENESIS)) {
    throw new IntegrityError(
      `the chain head recorded in meta (seq ${meta.headSeq}, ${short(meta.headHash)}) is not the last stored record ` +
        `(${head ? `seq ${head.seq}, ${short(head.chainHash)}` : "no records"}): records were removed from or added to the end`,
      "meta-head",
    );
  }
}

/** What the sync finds in its write transaction before it writes anything (head: the last stored record). */
export interface StateBeforeWrite extends StoredChainEnd, SignedEnd {
  /** The quarantine table's highest id (null: no rows). */
  quarantineLast: number | null;
}

/**
 * The sync's checks before a batch: meta's head against the last stored record, with the key the signed
 * head still in the chain (records cut off the end cannot be re-signed without the key), and no
 * quarantine row the digest has not folded in (new ones are folded in from its lastId on: one added since
 * would be taken in). Only what the write would cover stops it: a break verify keeps showing whatever is
 * added (a record or quarantine row removed from the middle, one edited) is left to verify and the
 * integrity control, and the sync goes on collecting. What is missing cannot be told from never written:
 * the sync writes it anew, and says so in the warnings it returns.
 */
export function checkBeforeBatch(
  state: StateBeforeWrite,
  signingKey: string | undefined,
  previousKey?: string,
): string[] {
  checkMetaHead(state, state.head);
  refuseMissingDigest(state);
  checkQuarantineEnd(state.quarantineDigest, state.quarantineLast);
  const warnings: string[] = [];
  if (state.head !== null && state.quarantineDigest === null && state.coverageDigest === null)
    warnings.push(
      "the quarantine and coverage digests were not in meta: this sync writes them from the rows present " +
        "(a store written before they existed; otherwise they were removed, and an edit made with it is now covered)",
    );
  return [...warnings, ...checkSignatureBeforeWrite(state, signingKey, previousKey)];
}

/** No quarantine row above the digest's lastId: the next fold (a batch's, an entity write's) would take it in. */
export function checkQuarantineEnd(quarantineDigest: string | null, last: number | null): void {
  if (quarantineDigest === null) return;
  const digest = storedDigest("quarantine", "chain:quarantine", quarantineDigest, (text) =>
    parseStoredJson(quarantineDigestSchema, text),
  );
  // Rows removed, or folded rows edited, stay shown by verify whatever the sync adds: no reason to stop.
  const lastId = Number(last ?? 0);
  if (lastId > digest.lastId) {
    throw new IntegrityError(
      `the quarantine table holds rows above id ${digest.lastId}, the last one its digest in meta ` +
        "(chain:quarantine) covers: rows were added outside flagtrail",
      "quarantine-rows",
    );
  }
}

/**
 * Both digests are written in a store's first batch, with the head's signature when there is a key, so a
 * store with one digest, or a signature, and a digest missing had it removed. Both missing and no
 * signature is a store written before the digests existed (its first sync creates them) or both removed:
 * the two cannot be told apart without a key (docs/reports.md).
 */
function refuseMissingDigest(state: StoredChainEnd): void {
  const missing = [
    state.quarantineDigest === null ? "chain:quarantine" : null,
    state.coverageDigest === null ? "chain:coverage" : null,
  ].filter((m) => m !== null);
  if (missing.length === 0 || (missing.length === 2 && state.headSignature === null)) return;
  throw missingDigestError(missing);
}

/** A digest (meta key) missing from a synced store: the sync's refusal and verify's finding (requireDigests). */
export function missingDigestError(missing: readonly string[]): IntegrityError {
  return new IntegrityError(
    `the digest in meta ${missing.join(" and ")} is missing from a store that has been synced, and every sync ` +
      "writes it: it was removed (with whatever rows it would have shown were changed)",
    `digest-missing-${missing.length === 2 ? "both" : missing[0] === "chain:quarantine" ? "quarantine" : "coverage"}`,
  );
}

/** Before the sync rehashes coverage: the rows present (`present`, their fold) must still match the stored digest. */
export function checkCoverageBeforeWrite(meta: StoredChainEnd, present: CoverageDigest): void {
  refuseMissingDigest(meta);
  compareDigest("coverage", "chain:coverage", meta.coverageDigest, present, (text) =>
    parseStoredJson(coverageDigestSchema, text),
  );
}

/** An IntegrityError found before a write, with what the sync did about it. */
export function refusedWrite(error: unknown): unknown {
  if (!(error instanceof IntegrityError)) return error;
  return new IntegrityError(
    `${error.message}; the sync wrote nothing over it (it would have covered the break), flagtrail verify ` +
      "says the same (or names a break it meets first), and a sync writes again once the store is restored from a backup",
    error.breakKey,
  );
}

/** Rule-diff rows of records not in audit_logs (orphanRuleDiffsIn): the first table holding any, how many, the first id. */
export interface OrphanRows {
  table: string;
  rows: number;
  first: string;
}

/** Rule diffs are written with their record and never removed without it: rows left over name removed records. */
export function orphanRowsError({ table, rows, first }: OrphanRows): IntegrityError {
  return new IntegrityError(
    `the ${table} table holds ${rows} ${rows === 1 ? "row" : "rows"} of records not in audit_logs (the first ` +
      `of audit_log_id ${first}): records were removed, their rule diffs left behind`,
    `orphans-${table}`,
  );
}
