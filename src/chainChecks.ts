// The judgements over the chains' ends and the digests that both `flagtrail verify` and the sync make: verify
// after its walk, the sync in its write transaction BEFORE it writes. The sync links new records and entity
// rows from the last stored row, folds new quarantine rows into the stored digest, rehashes coverage and
// re-signs the heads: writing over a break would cover it (verify passes afterwards), so it refuses instead.
// Both chains' heads are signed and checked by the same code, named by a SignedChain.

import { z } from "zod";
import {
  type CoverageDigest,
  checkChainHeadSignature,
  coverageDigestSchema,
  type QuarantineDigest,
  quarantineDigestSchema,
  type SignedChainName,
  signChainHead,
} from "./digests.ts";
import { IntegrityError } from "./errors.ts";
import { CHAIN_GENESIS, type EntityChainHead } from "./hash.ts";
import { parseStoredJson } from "./storedJson.ts";

export const short = (hash: string): string => `${hash.slice(0, 12)}…`;

export interface ChainHead {
  seq: number;
  chainHash: string;
}

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

/** How a signed chain is named in meta and in sentences: the records' chain or the entity rows'. */
export interface SignedChain {
  name: SignedChainName;
  /** Its head, in sentences. */
  head: string;
  /** meta's keys of the signature and of the seq it was made over. */
  signatureKey: string;
  signedSeqKey: string;
  /** A row of it, and how its seq is named. */
  row: string;
  seq: string;
  /** Prepended to the break keys (controls' finding keys stay those of the records' chain). */
  breakPrefix: string;
}

const RECORD_CHAIN: SignedChain = {
  name: "records",
  head: "chain head",
  signatureKey: "chain:head_signature",
  signedSeqKey: "chain:head_signed_seq",
  row: "record",
  seq: "seq",
  breakPrefix: "",
};

export const ENTITY_CHAIN: SignedChain = {
  name: "entities",
  head: "entity chain head",
  signatureKey: "entity_chain:head_signature",
  signedSeqKey: "entity_chain:head_signed_seq",
  row: "entity row",
  seq: "entity seq",
  breakPrefix: "entity-",
};

/**
 * With a key, the chain's last row must carry the head signature the writer stored: rows cut off the end
 * cannot be re-signed without the key, even when meta's head was rewritten to match. `signedHead`: the row
 * meta's signed seq names (stateBeforeWriteIn), so that verify names the sync's seq.
 */
export function checkHeadSignature(
  meta: { headSignature: string | null },
  head: ChainHead | null,
  key: string,
  { chain = RECORD_CHAIN, signedHead = null }: { chain?: SignedChain; signedHead?: ChainHead | null } = {},
): void {
  const breakKey = (what: string) => `${chain.breakPrefix}head-signature${what}`;
  if (head === null) {
    if (meta.headSignature !== null)
      throw new IntegrityError(
        `meta holds a signed ${chain.head} but the store has no ${chain.row}s: they were removed`,
        breakKey(chain.name === "records" ? "-no-records" : "-no-rows"),
      );
    return;
  }
  if (meta.headSignature === null) {
    throw new IntegrityError(
      `the ${chain.head} is not signed (meta ${chain.signatureKey} is missing) but FLAGTRAIL_SIGNING_KEY is set: ` +
        "the signature was removed, or the store was last written without the key (a sync with the key signs it)",
      breakKey("-missing"),
    );
  }
  // Over the head itself (an older flagtrail signed so, see checkBeforeBatch), else over meta's signed seq.
  if (checkChainHeadSignature(head, meta.headSignature, key, chain.name)) return;
  const signed = signedHead ?? head;
  if (signed.seq === head.seq || !checkChainHeadSignature(signed, meta.headSignature, key, chain.name))
    throw signatureMismatch(chain, signed, signedHead === null ? `the last ${chain.row}` : undefined);
  throw new IntegrityError(
    `the ${chain.head} is signed at ${chain.seq} ${signed.seq}, not at the last ${chain.row} (${chain.seq} ${head.seq}): ` +
      `the ${chain.row}s after it were stored by a sync without FLAGTRAIL_SIGNING_KEY (the next sync with the key ` +
      "signs them) or added outside flagtrail",
    breakKey(""),
  );
}

/**
 * The one sentence verify and the sync give: `signed`, the row the signature was made over (chain hash ""
 * when it is gone), named as `what` (meta without a signed seq: the last row is assumed).
 */
function signatureMismatch(
  chain: SignedChain,
  signed: ChainHead,
  what = `the ${chain.row} it was made over`,
) {
  const row = signed.chainHash === "" ? "no longer in the store" : short(signed.chainHash);
  return new IntegrityError(
    `the ${chain.head}'s HMAC-SHA256 signature does not match ${what} (${chain.seq} ${signed.seq}, ${row}): ` +
      `${chain.row}s were removed from or changed at the end, or the key is not the one the store was signed with ` +
      "(after a rotation, give the old key to the next sync as FLAGTRAIL_SIGNING_KEY_PREVIOUS)",
    `${chain.breakPrefix}head-signature`,
  );
}

const storedHeadSchema = z.looseObject({ seq: z.unknown().optional(), hash: z.unknown().optional() });

/** The entity chain's head meta mirrors (JSON {seq, hash}) against its last row: rows cut off the end. */
export function checkEntityHead(
  key: string,
  metaHead: string | null,
  head: { seq: number; hash: string } | null,
) {
  // Text that is not such an object reads as no head: it matches only a chain without rows.
  const recorded = parseStoredJson(storedHeadSchema, metaHead);
  if (
    (recorded?.seq ?? 0) !== (head?.seq ?? 0) ||
    (recorded?.hash ?? CHAIN_GENESIS) !== (head?.hash ?? CHAIN_GENESIS)
  ) {
    throw new IntegrityError(
      `the entity chain head recorded in meta (${key}) is not its last row ` +
        `(${head ? `entity seq ${head.seq}, ${short(head.hash)}` : "no rows"}): rows were removed from or added to the end`,
      "entity-head",
    );
  }
}

/** What a write finds of a signed chain's end in its transaction (the records' or the entity rows'). */
interface SignedEnd {
  /** The chain's last row (null: none). */
  head: ChainHead | null;
  headSignature: string | null;
  /**
   * The head the signature was made over (meta's signed seq and that row's chain hash, "" when the row is
   * gone): a sync without the key since moved the head on. null: no signed seq in meta.
   */
  signedHead: ChainHead | null;
}

/** FLAGTRAIL_SIGNING_KEY (and the previous one, in a rotation) of an entity write; where its warnings go. */
export interface EntitySigning {
  key: string | undefined;
  previousKey?: string | undefined;
  warn: (message: string) => void;
}

/** The entity chain's end as a write finds it: meta's texts, the last row's link, the link at the signed seq. */
export interface EntityEnd {
  meta: { head: string | null; signature: string | null; signedSeq: string | null };
  head: EntityChainHead | null;
  signedLink: EntityChainHead | null;
}

const asChainHead = (link: EntityChainHead | null) => link && { seq: link.seq, chainHash: link.hash };

/**
 * An entity write's checks before it links from the last row, as checkBeforeBatch's for records: meta's
 * mirror (`mirrorKey`) against that row, with the key the signed head still in the chain.
 */
export function checkEntityEnd(mirrorKey: string, end: EntityEnd, signing: EntitySigning | undefined): void {
  checkEntityHead(mirrorKey, end.meta.head, end.head);
  const at = end.meta.signedSeq === null ? null : Number(end.meta.signedSeq);
  const signedHead = at === null ? null : { seq: at, chainHash: end.signedLink?.hash ?? "" };
  const state = { head: asChainHead(end.head), headSignature: end.meta.signature, signedHead };
  for (const warning of checkSignatureBeforeWrite(state, signing?.key, signing?.previousKey, ENTITY_CHAIN))
    signing?.warn(warning);
}

/** meta's entries once a write moved the entity chain's head to `head`: its mirror, with the key its signature. */
export function entityHeadEntries(mirrorKey: string, head: EntityChainHead, key: string | undefined) {
  const entries: [string, string][] = [[mirrorKey, JSON.stringify(head)]];
  if (key && head.seq > 0) {
    const signature = signChainHead(asChainHead(head)!, key, ENTITY_CHAIN.name);
    entries.push([ENTITY_CHAIN.signatureKey, signature], [ENTITY_CHAIN.signedSeqKey, String(head.seq)]);
  }
  return entries;
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

/**
 * With the key, the signed head still in the chain before a write re-signs it: rows cut off the end cannot
 * be re-signed without the key. A head never signed (or its signature removed) gets a warning and is signed.
 */
function checkSignatureBeforeWrite(
  state: SignedEnd,
  signingKey: string | undefined,
  previousKey: string | undefined,
  chain: SignedChain = RECORD_CHAIN,
): string[] {
  if (!signingKey) return [];
  const { head, headSignature } = state;
  if (head === null) {
    checkHeadSignature(state, null, signingKey, { chain }); // a signature left over no rows: they were removed
    return [];
  }
  if (headSignature === null) return [unsignedWarning(chain, head)];
  // The head itself too: an older flagtrail (before chain:head_signed_seq) signs it and leaves the seq.
  const heads = [state.signedHead ?? head, head];
  const signedWith = (key: string | undefined) =>
    key !== undefined && heads.some((h) => checkChainHeadSignature(h, headSignature, key, chain.name));
  // A previous key left set after its rotation would let whoever holds it cut and re-sign the end.
  if (signedWith(signingKey)) return previousKey === undefined ? [] : [previousKeyLeftWarning(chain)];
  // previousKey: a rotation; the write signs the head with the new key.
  if (signedWith(previousKey)) return [];
  if (state.signedHead === null) return [unsignedWarning(chain, head)];
  throw signatureMismatch(chain, state.signedHead);
}

const previousKeyLeftWarning = (chain: SignedChain) =>
  `FLAGTRAIL_SIGNING_KEY_PREVIOUS is set but the ${chain.head} is already signed with FLAGTRAIL_SIGNING_KEY: ` +
  "the rotation is done, remove the old key (while it is set, it can sign a chain cut at its end)";

const unsignedWarning = (chain: SignedChain, head: ChainHead) =>
  `the ${chain.head} was not signed with FLAGTRAIL_SIGNING_KEY (meta ${chain.signatureKey} or ${chain.signedSeqKey} ` +
  `missing, or signed by an older flagtrail and moved on since): this sync signs it from ${chain.seq} ${head.seq} on; ` +
  `if it was signed before, the signature was removed, and ${chain.row}s cut off the end with it cannot be shown any more`;

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
