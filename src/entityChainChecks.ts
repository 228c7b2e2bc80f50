// The entity chain's end as a write and verify judge it: meta's mirror of its head against its last row, and
// with the key the head's signature (headSignatures.ts); what a write puts in meta once it moved the head.
import { z } from "zod";
import { signChainHead } from "./digests.ts";
import { IntegrityError } from "./errors.ts";
import { CHAIN_GENESIS, type EntityChainHead } from "./hash.ts";
import { checkSignatureBeforeWrite, ENTITY_CHAIN, short } from "./headSignatures.ts";
import { parseStoredJson } from "./storedJson.ts";

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
