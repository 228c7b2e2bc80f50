// `flagtrail verify` over the entity chain (config versions, their revisions, experiment and metric
// snapshots): each row's hash against its raw record, the columns copied from it, each link, seq without
// gaps from 1, and the head meta mirrors (rows cut off the end show there); with the key, the head's
// signature (rows cut off the end with the mirror rewritten to match show there).
import { checkEntityHead } from "../entityChainChecks.ts";
import { IntegrityError } from "../errors.ts";
import { CHAIN_GENESIS, canonicalJson, chainLink, recordHash } from "../hash.ts";
import { checkHeadSignature, ENTITY_CHAIN } from "../headSignatures.ts";
import { ENTITY_CHAIN_HEAD_KEY, readEntityChain } from "../store/entityChain.ts";
import type { AnyStore } from "../store/openAny.ts";
import { pacer } from "./pace.ts";

export interface EntityChainCheck {
  rows: number;
  head: { seq: number; hash: string } | null;
  /** "valid" with a key; "not checked" without one. */
  signature: "valid" | "not checked";
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function checkEntityChain(store: AnyStore, signingKey?: string): Promise<EntityChainCheck> {
  return readEntityChain(store, async (rows, meta) => {
    let previous = CHAIN_GENESIS;
    let seq = 0;
    // The link at the seq the signature was made over, so a mismatch names it as the refused write does.
    const signedSeq = meta.signedSeq === null ? null : Number(meta.signedSeq);
    let signedLink = "";
    const pause = pacer();
    for await (const row of rows) {
      await pause();
      const where = `${row.tbl} row ${row.id} (entity seq ${row.entity_seq})`;
      seq += 1;
      if (row.entity_seq !== seq)
        throw new IntegrityError(
          `${where}: expected entity seq ${seq}: rows were removed`,
          `entity-${seq}-missing`,
        );
      const raw = parse(row.raw);
      if (raw === undefined || recordHash(raw) !== row.record_hash)
        throw new IntegrityError(
          `${where}: record_hash differs from the hash of its raw record`,
          `entity-${row.entity_seq}-hash`,
        );
      const copied = parse(row.copied) as Record<string, unknown>;
      for (const [field, value] of Object.entries(copied)) {
        if (canonicalJson((raw as Record<string, unknown>)[field]) !== canonicalJson(value))
          throw new IntegrityError(
            `${where}: its ${field} column differs from the raw record`,
            `entity-${row.entity_seq}-column-${field}`,
          );
      }
      previous = chainLink(previous, row.record_hash);
      if (seq === signedSeq) signedLink = previous;
      if (previous !== row.entity_chain_hash)
        throw new IntegrityError(
          `${where}: the entity chain breaks here (an earlier row was changed)`,
          `entity-${row.entity_seq}-link`,
        );
    }
    const head = seq === 0 ? null : { seq, hash: previous };
    checkEntityHead(ENTITY_CHAIN_HEAD_KEY, meta.head, head);
    if (signingKey) {
      const signedHead = signedSeq === null ? null : { seq: signedSeq, chainHash: signedLink };
      checkHeadSignature(
        { headSignature: meta.signature },
        head && { seq, chainHash: previous },
        signingKey,
        {
          chain: ENTITY_CHAIN,
          signedHead,
        },
      );
    }
    return { rows: seq, head, signature: signingKey ? "valid" : "not checked" };
  });
}
