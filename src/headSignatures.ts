// A chain whose head is signed with FLAGTRAIL_SIGNING_KEY (HMAC): the records' chain and the entity rows'
// chain, named by a SignedChain and checked by the same code. verify checks a head's signature after its walk;
// a write checks it before it links new rows and re-signs the head (a cut end must stop it, not be covered).
import { checkChainHeadSignature, type SignedChainName } from "./digests.ts";
import { IntegrityError } from "./errors.ts";

export const short = (hash: string): string => `${hash.slice(0, 12)}…`;

export interface ChainHead {
  seq: number;
  chainHash: string;
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

/** What a write finds of a signed chain's end in its transaction (the records' or the entity rows'). */
export interface SignedEnd {
  /** The chain's last row (null: none). */
  head: ChainHead | null;
  headSignature: string | null;
  /**
   * The head the signature was made over (meta's signed seq and that row's chain hash, "" when the row is
   * gone): a sync without the key since moved the head on. null: no signed seq in meta.
   */
  signedHead: ChainHead | null;
}

/**
 * With the key, the signed head still in the chain before a write re-signs it: rows cut off the end cannot
 * be re-signed without the key. A head never signed (or its signature removed) gets a warning and is signed.
 */
export function checkSignatureBeforeWrite(
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
