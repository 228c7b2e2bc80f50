// A PostgreSQL store's connection, kept out of its handle as src/store/connection.ts does for SQLite:
// only modules in src/store/ reach the pool, so SQL stays behind the store's functions.
import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import type pg from "pg";
import type * as schema from "./schema.ts";

export type PgDb = NodePgDatabase<typeof schema>;

/** An open PostgreSQL store: where it is (password masked) and how to close it. */
export interface PgStore {
  readonly engine: "postgres";
  /** The store's URL with its password shown as `***`: safe to print. */
  readonly location: string;
  readonly readonly: boolean;
  /** Gives back the leases this process holds, then closes every connection. */
  close(): Promise<void>;
}

/** A lease this process holds: the dedicated session whose advisory lock is the lease. */
interface HeldLease {
  readonly holder: string;
  readonly client: pg.PoolClient;
}

export interface PgConnection {
  readonly pool: pg.Pool;
  readonly db: PgDb;
  /** The URL as given (with its password): for messages use the store's `location`. */
  readonly url: string;
  readonly leases: Map<string, HeldLease>;
  /** A project's own schema, or null for the URL's: leases of two projects must be two locks. */
  readonly namespace: string | null;
}

const connections = new WeakMap<PgStore, PgConnection>();

export function attachPgConnection(store: PgStore, connection: PgConnection): PgStore {
  connections.set(store, connection);
  return store;
}

export function pgConnectionOf(store: PgStore): PgConnection {
  const connection = connections.get(store);
  if (!connection) throw new Error("not an open flagtrail PostgreSQL store");
  return connection;
}

export function pgDrizzleOf(store: PgStore): PgDb {
  return pgConnectionOf(store).db;
}
