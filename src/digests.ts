// The math of the digests that src/store/digests.ts keeps in `meta` for what the record chain does not
// cover (the quarantine and coverage tables, the chain heads' HMAC): each table's rows folded into a
// hash chain in a fixed order, and the head's signature. Pure: the writer and `flagtrail verify` both
// fold with these, so they agree by construction.
import { createHmac } from "node:crypto";
import { z } from "zod";
import { CHAIN_GENESIS, canonicalJson, chainLink, hexDigestsEqual, sha256Hex } from "./hash.ts";

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const quarantineDigestSchema = z.object({
  rows: z.number().int().nonnegative(),
  /** The highest quarantine.id folded in: the writer folds only rows above it. */
  lastId: z.number().int().nonnegative(),
  digest: hex64,
});
export type QuarantineDigest = z.infer<typeof quarantineDigestSchema>;

export const coverageDigestSchema = z.object({ rows: z.number().int().nonnegative(), digest: hex64 });
export type CoverageDigest = z.infer<typeof coverageDigestSchema>;

/** A quarantine row's columns as stored, all but server_day (see above). */
export interface QuarantineRow {
  id: number;
  record_id: string | null;
  raw: string;
  raw_hash: string;
  issues: string;
  request_path: string | null;
  received_at: number;
  sync_run_id: number | null;
}

/** A coverage row's columns as stored. */
export interface CoverageRow {
  filter_key: string;
  day: string;
  server_total: number;
  local_count: number;
  checked_at: number;
  sync_run_id: number | null;
  day_closed: number;
  quarantined_count: number;
}

export const EMPTY_QUARANTINE_DIGEST: QuarantineDigest = { rows: 0, lastId: 0, digest: CHAIN_GENESIS };
export const EMPTY_COVERAGE_DIGEST: CoverageDigest = { rows: 0, digest: CHAIN_GENESIS };

/** The digest with one more quarantine row (rows must come in id order). */
export function foldQuarantineRow(state: QuarantineDigest, row: QuarantineRow): QuarantineDigest {
  const rowHash = sha256Hex(
    canonicalJson([
      row.id,
      row.record_id,
      row.raw,
      row.raw_hash,
      row.issues,
      row.request_path,
      row.received_at,
      row.sync_run_id,
    ]),
  );
  return { rows: state.rows + 1, lastId: row.id, digest: chainLink(state.digest, rowHash) };
}

/** A coverage row's hash, the link the digest adds for it. */
function coverageRowHash(row: CoverageRow): string {
  return sha256Hex(
    canonicalJson([
      row.filter_key,
      row.day,
      row.server_total,
      row.local_count,
      row.checked_at,
      row.sync_run_id,
      row.day_closed,
      row.quarantined_count,
    ]),
  );
}

const linkCoverageRow = (state: CoverageDigest, rowHash: string): CoverageDigest => ({
  rows: state.rows + 1,
  digest: chainLink(state.digest, rowHash),
});

/** The digest with one more coverage row (rows must come in (filter_key, day) order). */
export function foldCoverageRow(state: CoverageDigest, row: CoverageRow): CoverageDigest {
  return linkCoverageRow(state, coverageRowHash(row));
}

// UTF-8 byte order, as SQLite's BINARY and PostgreSQL's "binary" sort: JS's < compares UTF-16 units instead,
// which puts U+E000-U+FFFF after the characters past U+FFFF.
const byteOrder = (a: string, b: string) => (a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b)));
const coverageOrder = (a: CoverageRow, b: CoverageRow) =>
  byteOrder(a.filter_key, b.filter_key) || byteOrder(a.day, b.day);

/**
 * The digest of the coverage rows present (in fold order), and the one after rows are upserted: each
 * present row is hashed once, and the links before the first row written are not made again. The sync
 * writes coverage a window at a time, so it reads and hashes the table once per write, not twice.
 */
export function foldCoverageRows(present: readonly CoverageRow[]) {
  const hashes = present.map(coverageRowHash);
  const states = [EMPTY_COVERAGE_DIGEST];
  for (const rowHash of hashes) states.push(linkCoverageRow(states.at(-1)!, rowHash));
  return {
    digest: states.at(-1)!,
    /** The digest once `written` (as stored, one row per key, any order) replace or join the rows. */
    upserted(written: readonly CoverageRow[]): CoverageDigest {
      const incoming = [...written].sort(coverageOrder);
      const before = (i: number, row: CoverageRow) =>
        i < present.length && coverageOrder(present[i]!, row) < 0;
      // The links before the first row written stay.
      let i = 0;
      while (i < present.length && (incoming.length === 0 || before(i, incoming[0]!))) i += 1;
      let state = states[i]!;
      for (const row of incoming) {
        for (; before(i, row); i += 1) state = linkCoverageRow(state, hashes[i]!);
        if (i < present.length && coverageOrder(present[i]!, row) === 0) i += 1;
        state = linkCoverageRow(state, coverageRowHash(row));
      }
      for (; i < present.length; i += 1) state = linkCoverageRow(state, hashes[i]!);
      return state;
    },
  };
}

/** The chains whose head the key signs: the records' (audit_logs) and the entity rows'. */
export type SignedChainName = "records" | "entities";

// Each chain its own prefix, so no other HMAC made with the same key (a report manifest's, the other
// chain's head) can stand in for it.
const HEAD_PREFIX: Record<SignedChainName, string> = {
  records: "flagtrail-chain-head/1",
  entities: "flagtrail-entity-chain-head/1",
};

/** HMAC-SHA256 (hex) of a chain's head: its seq and chain hash. */
export function signChainHead(
  head: { seq: number; chainHash: string },
  key: string,
  chain: SignedChainName = "records",
): string {
  return createHmac("sha256", key)
    .update(`${HEAD_PREFIX[chain]}\n${head.seq}\n${head.chainHash}`)
    .digest("hex");
}

/** Whether `signature` is signChainHead(head, key, chain), compared in constant time. */
export function checkChainHeadSignature(
  head: { seq: number; chainHash: string },
  signature: string,
  key: string,
  chain: SignedChainName = "records",
): boolean {
  return hexDigestsEqual(signChainHead(head, key, chain), signature);
}
