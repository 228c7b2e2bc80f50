// The entity chain: the four entity tables' rows linked in one hash chain of their own, in entity_seq
// order, as in the record chain; its head mirrored in meta so that rows cut off the end show in `verify`.
import { type EntityChainHead, EntityChainLinks } from "../hash.ts";
import { type Dialect, jsonObjectText, pagesOf, rowsOf } from "./dialect.ts";
import { readMetaValueIn, writeMetaValueQuery } from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { inReadSnapshot, type Queries, type SQL, sql } from "./query.ts";

/** The tables the entity chain runs through; each has entity_seq, entity_chain_hash, raw, record_hash. */
const ENTITY_CHAIN_TABLES = [
  "config_versions",
  "config_version_revisions",
  "experiment_snapshots",
  "metric_snapshots",
] as const;
type EntityChainTable = (typeof ENTITY_CHAIN_TABLES)[number];

/** meta key: JSON {seq, hash} of the entity chain's last link. */
export const ENTITY_CHAIN_HEAD_KEY = "entity_chain:head";

/** Per table, the columns copied from the raw record (verify compares them with it), by the raw record's names. */
const COPIED: Record<EntityChainTable, readonly (readonly [string, string])[]> = {
  config_versions: [
    ["id", "config_id"],
    ["version", "version"],
    ["lastModifiedTime", "last_modified_time"],
  ],
  config_version_revisions: [["version", "version"]],
  experiment_snapshots: [
    ["id", "experiment_id"],
    ["name", "name"],
    ["status", "status"],
  ],
  metric_snapshots: [["id", "metric_id"]],
};

/** The four tables as one, in the columns of EntityChainRow. */
function union(dialect: Dialect): SQL {
  return sql.join(
    ENTITY_CHAIN_TABLES.map((table) => {
      const copied = jsonObjectText(
        dialect,
        COPIED[table].map(([key, column]) => [key, sql.raw(column)] as const),
      );
      return sql`SELECT ${sql.raw(`'${table}'`)} AS tbl, id, raw, record_hash, entity_seq, entity_chain_hash, ${copied} AS copied FROM ${sql.raw(table)}`;
    }),
    sql` UNION ALL `,
  );
}

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

/**
 * What `verify` reads of the entity chain, in a read snapshot of its own (it does not depend on the record
 * chain): the rows in entity_seq order, a page at a time, and the head meta holds.
 */
export function readEntityChain<T>(
  store: AnyStore,
  read: (rows: AsyncIterable<EntityChainRow>, metaHead: string | null) => Promise<T>,
): Promise<T> {
  return inReadSnapshot(store, async (q) => {
    const metaHead = (await readMetaValueIn(q, ENTITY_CHAIN_HEAD_KEY)) ?? null;
    const rows = rowsOf(
      pagesOf<EntityChainRow & Record<string, unknown>>(
        q,
        (after, limit) =>
          sql`SELECT * FROM (${union(q.dialect)}) u WHERE entity_seq > ${after} ORDER BY entity_seq LIMIT ${limit}`,
        "entity_seq",
      ),
    );
    return read(rows, metaHead);
  });
}

/**
 * The links of one write transaction, from the last link stored (each table's newest by its entity_seq
 * index). Only one writer runs at a time (the sync lease), so reading the head once is enough.
 */
export async function entityChainLinksIn(q: Queries): Promise<EntityChainLinks> {
  const newest = sql.join(
    ENTITY_CHAIN_TABLES.map(
      (table) =>
        sql`SELECT * FROM (SELECT entity_seq AS seq, entity_chain_hash AS hash FROM ${sql.raw(table)}
            ORDER BY entity_seq DESC LIMIT 1) ${sql.raw(`t_${table}`)}`,
    ),
    sql` UNION ALL `,
  );
  return new EntityChainLinks(
    (await q.get<EntityChainHead>(sql`SELECT seq, hash FROM (${newest}) h ORDER BY seq DESC LIMIT 1`)) ??
      null,
  );
}

/** Mirrors the transaction's last link in meta, so that rows cut off the end show up in `verify`. */
export async function commitEntityChainIn(q: Queries, links: EntityChainLinks, now: number): Promise<void> {
  await q.run(writeMetaValueQuery(ENTITY_CHAIN_HEAD_KEY, JSON.stringify(links.head), now));
}
