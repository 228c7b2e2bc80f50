// The entity chain: config versions, their revisions, experiment and metric snapshots are linked in one
// hash chain of their own, in entity_seq order across the four tables (each link is
// sha256(previous link + row's record hash), as in the record chain). The head is mirrored in meta so
// that rows cut off the end show up in `verify`.
import type Database from "better-sqlite3";
import { CHAIN_GENESIS, chainLink } from "../hash.ts";
import { sqliteOf } from "./connection.ts";
import { type AnyStore, pgSide } from "./openAny.ts";

/** The tables the entity chain runs through; each has entity_seq, entity_chain_hash, raw, record_hash. */
export const ENTITY_CHAIN_TABLES = [
  "config_versions",
  "config_version_revisions",
  "experiment_snapshots",
  "metric_snapshots",
] as const;
export type EntityChainTable = (typeof ENTITY_CHAIN_TABLES)[number];

/** meta key: JSON {seq, hash} of the entity chain's last link. */
export const ENTITY_CHAIN_HEAD_KEY = "entity_chain:head";

export interface EntityChainHead {
  seq: number;
  hash: string;
}

/** Per table, the columns copied from the raw record (verify compares them with it). */
const COPIED: Record<EntityChainTable, string> = {
  config_versions: "json_object('id', config_id, 'version', version, 'lastModifiedTime', last_modified_time)",
  config_version_revisions: "json_object('version', version)",
  experiment_snapshots: "json_object('id', experiment_id, 'name', name, 'status', status)",
  metric_snapshots: "json_object('id', metric_id)",
};

const UNION = ENTITY_CHAIN_TABLES.map(
  (table) =>
    `SELECT '${table}' AS tbl, id, raw, record_hash, entity_seq, entity_chain_hash, ${COPIED[table]} AS copied FROM ${table}`,
).join(" UNION ALL ");

export interface EntityChainRow {
  tbl: EntityChainTable;
  id: number;
  raw: string;
  record_hash: string;
  entity_seq: number;
  entity_chain_hash: string;
  /** JSON object of the columns copied from `raw`, by the raw record's field names. */
  copied: string;
}

/** The last link stored, or null for an empty chain. */
function entityChainHead(sqlite: Database.Database): EntityChainHead | null {
  const row = sqlite
    .prepare(
      `SELECT entity_seq AS seq, entity_chain_hash AS hash FROM (${UNION}) ORDER BY entity_seq DESC LIMIT 1`,
    )
    .get() as EntityChainHead | undefined;
  return row ?? null;
}

/** Every row of the chain in order . */
export function entityChainRows(sqlite: Database.Database): IterableIterator<EntityChainRow> {
  return sqlite
    .prepare(`SELECT * FROM (${UNION}) ORDER BY entity_seq`)
    .iterate() as IterableIterator<EntityChainRow>;
}

/**
 * What `verify` reads of the entity chain, in one read transaction of its own (the entity chain does
 * not depend on the record chain, so it needs no snapshot shared with it): the rows in order and the
 * head meta holds, as stored.
 */
export async function readEntityChain<T>(
  store: AnyStore,
  read: (rows: AsyncIterable<EntityChainRow>, metaHead: string | null) => Promise<T>,
): Promise<T> {
  if (store.engine === "postgres") return (await pgSide()).readPgEntityChain(store, read);
  const sqlite = sqliteOf(store);
  const own = !sqlite.inTransaction;
  if (own) sqlite.prepare("BEGIN").run();
  try {
    const metaHead = sqlite
      .prepare("SELECT value FROM meta WHERE key = ?")
      .pluck()
      .get(ENTITY_CHAIN_HEAD_KEY);
    async function* rows(): AsyncGenerator<EntityChainRow> {
      for (const row of entityChainRows(sqlite)) yield row;
    }
    return await read(rows(), typeof metaHead === "string" ? metaHead : null);
  } finally {
    if (own) sqlite.prepare("COMMIT").run();
  }
}

/**
 * The links of one write transaction, handed out from the head stored before it. No database access:
 * both engines' writers build their links here, so the same rows get the same entity_seq and hash.
 */
export class EntityChainLinks {
  private current: EntityChainHead;

  constructor(stored: EntityChainHead | null) {
    this.current = stored === null ? { seq: 0, hash: CHAIN_GENESIS } : { seq: stored.seq, hash: stored.hash };
  }

  next(recordHash: string): EntityChainHead {
    this.current = { seq: this.current.seq + 1, hash: chainLink(this.current.hash, recordHash) };
    return this.current;
  }

  /** The last link handed out (or the stored head): what meta mirrors. */
  get head(): EntityChainHead {
    return this.current;
  }
}

/**
 * Hands out the next links inside one write transaction; commit() mirrors the head in meta. Only one
 * writer runs at a time (the sync lease), so reading the head once per transaction is enough.
 */
export class EntityChainWriter extends EntityChainLinks {
  constructor(private readonly sqlite: Database.Database) {
    super(entityChainHead(sqlite));
  }

  commit(now: number): void {
    this.sqlite
      .prepare(
        `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      )
      .run(ENTITY_CHAIN_HEAD_KEY, JSON.stringify(this.head), now);
  }
}
