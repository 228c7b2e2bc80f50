// `flagtrail verify`'s store half: every check reads the same snapshot (readChainSnapshot), so a sync
// committing pages meanwhile cannot look like tampering. Any mismatch is an IntegrityError naming the
// first broken thing.
import { checkMetaHead, orphanRowsError } from "../chainChecks.ts";
import { IntegrityError } from "../errors.ts";
import { type ChainHead, checkHeadSignature, short } from "../headSignatures.ts";
import { readChainSnapshot } from "../store/chainRead.ts";
import type { AnyStore } from "../store/openAny.ts";
import { checkEntityChain, type EntityChainCheck } from "./entities.ts";
import { checkRecords, type RecordsCheck } from "./records.ts";
import { checkCoverage, checkQuarantine, checkRevisions, requireDigests, type TableCheck } from "./tables.ts";
import { checkWaivers } from "./waivers.ts";

/** The parts of the store read, in order. */
export type StorePart = "meta" | "records" | "revisions" | "quarantine" | "coverage";

export interface VerifyStoreOptions {
  /** FLAGTRAIL_SIGNING_KEY: check the chain heads' signatures (their absence is then an error). */
  signingKey?: string | undefined;
  /** A report manifest's chain head: it must still be in the store, unchanged (the store only grows). */
  manifestHead?: ChainHead | null | undefined;
  /** Called after each part is read (progress; tests write to the store in between). */
  afterRead?: ((part: StorePart) => void | Promise<void>) | undefined;
}

export interface StoreCheck extends RecordsCheck {
  /** audit_log_revisions rows re-hashed. */
  revisions: number;
  quarantine: TableCheck;
  coverage: TableCheck;
  /** "valid" with a key; "not checked" without one. */
  signature: "valid" | "not checked";
  /** The entity chain (config versions, revisions, experiment and metric snapshots). */
  entities: EntityChainCheck;
  /** Waiver rows re-hashed and re-linked (src/verify/waivers.ts). */
  waivers: number;
}

export async function verifyStore(store: AnyStore, options: VerifyStoreOptions = {}): Promise<StoreCheck> {
  const after = async (part: StorePart) => {
    await options.afterRead?.(part);
  };
  const records = await readChainSnapshot(store, async (reader) => {
    const meta = await reader.meta();
    await after("meta");
    const chain = await checkRecords(reader, meta.ruleDiffsBackfilledTo);
    await after("records");
    checkMetaHead(meta, chain.head);
    const key = options.signingKey;
    if (key)
      checkHeadSignature(meta, chain.head, key, {
        signedHead: await reader.signedHead(meta.signedSeq, chain.head),
      });
    const orphans = await reader.orphanRuleDiffs();
    if (orphans) throw orphanRowsError(orphans);
    const revisions = await checkRevisions(reader);
    await after("revisions");
    const quarantine = await checkQuarantine(reader, meta);
    await after("quarantine");
    const coverage = await checkCoverage(reader, meta);
    await after("coverage");
    requireDigests(meta, chain.records, quarantine, coverage);
    if (options.manifestHead) {
      const head = options.manifestHead;
      const stored = await reader.chainHashAt(head.seq);
      if (stored !== head.chainHash) {
        throw new IntegrityError(
          `the manifest's chain head (seq ${head.seq}, ${short(head.chainHash)}) is not in the store ` +
            `(${stored === null ? "no record at that seq" : `found ${short(stored)}`})`,
          "manifest-head",
        );
      }
    }
    const signature: StoreCheck["signature"] = options.signingKey ? "valid" : "not checked";
    return { ...chain, revisions, quarantine, coverage, signature };
  });
  return {
    ...records,
    entities: await checkEntityChain(store, options.signingKey),
    waivers: await checkWaivers(store),
  };
}
