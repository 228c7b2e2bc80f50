// The entity chain: the four entity tables' rows linked in one hash chain of their own, in entity_seq order.
import { checkEntityHead } from "../chainChecks.ts";
import { type EntityChainHead, EntityChainLinks } from "../hash.ts";
import { jsonObjectText, pagesOf, rowsOf } from "./dialect.ts";
import { readMetaValueIn, writeMetaValueQuery } from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { inReadSnapshot, inTransaction, type Queries, sql } from "./query.ts";

/** meta key: JSON {seq, hash} of the entity chain's last link. */
export const ENTITY_CHAIN_HEAD_KEY = "entity_chain:head";

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

/** `verify`'s read of the entity chain in its own snapshot: rows in entity_seq order, and meta's head. */
export function readEntityChain<T>(
  store: AnyStore,
  read: (rows: AsyncIterable<EntityChainRow>, metaHead: string | null) => Promise<T>,
): Promise<T> {
  return inReadSnapshot(store, async (q) => {
    const metaHead = (await readMetaValueIn(q, ENTITY_CHAIN_HEAD_KEY)) ?? null;
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
    return read(rows, metaHead);
  });
}

/**
 * Runs `write` in one transaction with the chain's links from the last stored (one writer: the sync lease),
 * then mirrors the last link in meta, so that rows cut off the end show up in `verify`.
 */
export function inEntityChain<T>(
  store: AnyStore,
  now: number,
  write: (q: Queries, chain: EntityChainLinks) => Promise<T>,
): Promise<T> {
  return inTransaction(store, async (q) => {
    const newest = sql.join(
      ENTITY_CHAIN_TABLES.map(
        (table) =>
          sql`SELECT * FROM (SELECT entity_seq AS seq, entity_chain_hash AS hash FROM ${sql.raw(table)}
              ORDER BY entity_seq DESC LIMIT 1) ${sql.raw(`t_${table}`)}`,
      ),
      sql` UNION ALL `,
    );
    const head = await q.get<EntityChainHead>(
      sql`SELECT seq, hash FROM (${newest}) h ORDER BY seq DESC LIMIT 1`,
    );
    // Links from the last stored row: rows cut off the end must stop the write, not be covered by it.
    const metaHead = (await readMetaValueIn(q, ENTITY_CHAIN_HEAD_KEY)) ?? null;
    checkEntityHead(ENTITY_CHAIN_HEAD_KEY, metaHead, head ?? null);
    const chain = new EntityChainLinks(head ?? null);
    const written = await write(q, chain);
    await q.run(writeMetaValueQuery(ENTITY_CHAIN_HEAD_KEY, JSON.stringify(chain.head), now));
    return written;
  });
}
