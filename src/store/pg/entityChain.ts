// The entity chain on a PostgreSQL store (src/store/entityChain.ts on SQLite): as `verify` reads it (the
// rows of the four tables in entity_seq order, a batch at a time, and the head meta holds, in one
// snapshot), and as the entity writers extend it (links from EntityChainLinks, as on SQLite).
import type pg from "pg";
import {
  ENTITY_CHAIN_HEAD_KEY,
  ENTITY_CHAIN_TABLES,
  type EntityChainHead,
  EntityChainLinks,
  type EntityChainRow,
  type EntityChainTable,
} from "../entityChain.ts";
import { flat, keyset } from "./chainRead.ts";
import type { PgStore } from "./connection.ts";
import { writePgMeta } from "./quarantine.ts";
import { inPgReadSnapshot } from "./readSnapshot.ts";

/** The columns copied from the raw record, as SQLite's json_object gives them (verify parses them). */
const COPIED: Record<EntityChainTable, string> = {
  config_versions:
    "json_build_object('id', config_id, 'version', version, 'lastModifiedTime', last_modified_time)::text",
  config_version_revisions: "json_build_object('version', version)::text",
  experiment_snapshots: "json_build_object('id', experiment_id, 'name', name, 'status', status)::text",
  metric_snapshots: "json_build_object('id', metric_id)::text",
};

// Built when read, not at load: this module and ../entityChain.ts import each other.
const union = () =>
  ENTITY_CHAIN_TABLES.map(
    (table) =>
      `SELECT '${table}' AS tbl, id, raw, record_hash, entity_seq, entity_chain_hash, ${COPIED[table]} AS copied FROM ${table}`,
  ).join(" UNION ALL ");

export function readPgEntityChain<T>(
  store: PgStore,
  read: (rows: AsyncIterable<EntityChainRow>, metaHead: string | null) => Promise<T>,
): Promise<T> {
  return inPgReadSnapshot(store, async (client) => {
    const head = await client.query<{ value: string }>("SELECT value FROM meta WHERE key = $1", [
      ENTITY_CHAIN_HEAD_KEY,
    ]);
    const select = `SELECT * FROM (${union()}) u WHERE entity_seq > $1 ORDER BY entity_seq LIMIT $2`;
    const rows = flat(keyset<EntityChainRow & Record<string, unknown>>(client, select, "entity_seq"));
    return read(rows, head.rows[0]?.value ?? null);
  });
}

/**
 * The links of one write transaction, from the last link stored (each table's newest by its entity_seq
 * index). Only one writer runs at a time (the sync lease), so reading the head once is enough.
 */
export async function pgEntityChainLinks(client: pg.ClientBase): Promise<EntityChainLinks> {
  const newest = ENTITY_CHAIN_TABLES.map(
    (table) =>
      `(SELECT entity_seq AS seq, entity_chain_hash AS hash FROM ${table} ORDER BY entity_seq DESC LIMIT 1)`,
  ).join(" UNION ALL ");
  const head = await client.query<EntityChainHead>(
    `SELECT seq, hash FROM (${newest}) h ORDER BY seq DESC LIMIT 1`,
  );
  return new EntityChainLinks(head.rows[0] ?? null);
}

/** Mirrors the transaction's last link in meta, as EntityChainWriter.commit does on SQLite. */
export async function commitPgEntityChain(
  client: pg.ClientBase,
  links: EntityChainLinks,
  now: number,
): Promise<void> {
  await writePgMeta(client, ENTITY_CHAIN_HEAD_KEY, JSON.stringify(links.head), now);
}
