// The entity chain: the four entity tables' rows linked in one hash chain of their own, in entity_seq order,
// its head mirrored in meta and, with the key, signed there as the records' is (src/chainChecks.ts).
import { checkEntityEnd, type EntitySigning, entityHeadEntries } from "../entityChainChecks.ts";
import { type EntityChainHead, EntityChainLinks } from "../hash.ts";
import { ENTITY_CHAIN } from "../headSignatures.ts";
import { jsonObjectText, pagesOf, rowsOf } from "./dialect.ts";
import { writeMetaValuesQuery } from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, inReadSnapshot, inTransaction, type Queries, sql } from "./query.ts";

/** meta key: JSON {seq, hash} of the entity chain's last link. */
export const ENTITY_CHAIN_HEAD_KEY = "entity_chain:head";

/** meta's head mirror, signature and signed seq, in one round trip. */
async function metaOf(q: Queries) {
  const keys = [ENTITY_CHAIN_HEAD_KEY, ENTITY_CHAIN.signatureKey, ENTITY_CHAIN.signedSeqKey];
  const rows = await q.all<{ key: string; value: string }>(
    sql`SELECT key, value FROM meta WHERE key IN ${inList(keys)}`,
  );
  const [head = null, signature = null, signedSeq = null] = keys.map(
    (key) => rows.find((r) => r.key === key)?.value,
  );
  return { head, signature, signedSeq };
}

// The chain's tables (each with raw, record_hash, entity_seq, entity_chain_hash) and the columns each copies
// from the raw record, by the raw record's names (verify compares them with it).
const COPIED = {
  config_versions: { id: "config_id", version: "version", lastModifiedTime: "last_modified_time" },
  config_version_revisions: { version: "version" },
  experiment_snapshots: { id: "experiment_id", name: "name", status: "status" },
  metric_snapshots: { id: "metric_id" },
};
type EntityChainTable = keyof typeof COPIED;
const ENTITY_CHAIN_TABLES = Object.keys(COPIED) as EntityChainTable[];

export interface EntityChainRow {
  tbl: EntityChainTable;
  id: number;
  raw: string;
  record_hash: string;
  entity_seq: number;
  entity_chain_hash: string;
  /** JSON object of the columns copied from `raw`, by the raw record's field names (spacing differs by engine). */
  copied: string;
}

/** `verify`'s read of the entity chain in its own snapshot: rows in entity_seq order, meta's head, signature and signed seq. */
export function readEntityChain<T>(
  store: AnyStore,
  read: (
    rows: AsyncIterable<EntityChainRow>,
    meta: { head: string | null; signature: string | null; signedSeq: string | null },
  ) => Promise<T>,
): Promise<T> {
  return inReadSnapshot(store, async (q) => {
    const meta = await metaOf(q);
    const union = sql.join(
      ENTITY_CHAIN_TABLES.map((table) => {
        const copied = jsonObjectText(
          q.dialect,
          Object.entries(COPIED[table]).map(([key, column]) => [key, sql.raw(column)] as const),
        );
        return sql`SELECT ${sql.raw(`'${table}'`)} AS tbl, id, raw, record_hash, entity_seq, entity_chain_hash,
          ${copied} AS copied FROM ${sql.raw(table)}`;
      }),
      sql` UNION ALL `,
    );
    const rows = rowsOf(
      pagesOf<EntityChainRow & Record<string, unknown>>(
        q,
        (after, limit) =>
          sql`SELECT * FROM (${union}) u WHERE entity_seq > ${after} ORDER BY entity_seq LIMIT ${limit}`,
        "entity_seq",
      ),
    );
    return read(rows, meta);
  });
}

/** The chain's newest link (null: no rows), or its link at entity seq `at`. */
async function linkIn(q: Queries, at?: number): Promise<EntityChainHead | null> {
  const where = at === undefined ? sql`` : sql`WHERE entity_seq = ${at}`;
  const newest = sql.join(
    ENTITY_CHAIN_TABLES.map(
      (table) =>
        sql`SELECT * FROM (SELECT entity_seq AS seq, entity_chain_hash AS hash FROM ${sql.raw(table)} ${where}
            ORDER BY entity_seq DESC LIMIT 1) ${sql.raw(`t_${table}`)}`,
    ),
    sql` UNION ALL `,
  );
  return (
    (await q.get<EntityChainHead>(sql`SELECT seq, hash FROM (${newest}) h ORDER BY seq DESC LIMIT 1`)) ?? null
  );
}

/**
 * Runs `write` in one transaction with the chain's links from the last stored row (one writer: the sync
 * lease), after checking what it builds on (chainChecks.ts: rows cut off the end must stop it, not be
 * covered); then mirrors the last link in meta, and with the key signs it, so that `verify` sees such a cut.
 */
export function inEntityChain<T>(
  store: AnyStore,
  context: { now: number; signing?: EntitySigning | undefined },
  write: (q: Queries, chain: EntityChainLinks) => Promise<T>,
): Promise<T> {
  return inTransaction(store, async (q) => {
    const [head, meta] = [await linkIn(q), await metaOf(q)];
    const signed = meta.signedSeq === null || !context.signing?.key ? head?.seq : Number(meta.signedSeq);
    const signedLink = signed === head?.seq ? head : await linkIn(q, signed);
    checkEntityEnd(ENTITY_CHAIN_HEAD_KEY, { meta, head, signedLink }, context.signing);
    const chain = new EntityChainLinks(head);
    const written = await write(q, chain);
    const entries = entityHeadEntries(ENTITY_CHAIN_HEAD_KEY, chain.head, context.signing?.key);
    await q.run(writeMetaValuesQuery(entries, context.now));
    return written;
  });
}

/** The sync's check of the chain's end before its entity reads, signing its head (a store signed before). */
export const checkEntityChainEnd = (store: AnyStore, context: Parameters<typeof inEntityChain>[1]) =>
  inEntityChain(store, context, async () => undefined);
