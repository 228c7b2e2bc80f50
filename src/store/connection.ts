// Each engine's connection, kept out of the store's opaque handle. Type-only driver imports: a SQLite store
// loads no PostgreSQL module.
import type Database from "better-sqlite3";
import type pg from "pg";

/** An open SQLite store: where it is and how to close it. */
export interface Store {
  readonly engine: "sqlite";
  readonly path: string;
  /** The file path, as shown to a person. */
  readonly location: string;
  readonly readonly: boolean;
  close(): void;
}

const connections = new WeakMap<Store, Database.Database>();

export function attachConnection(store: Store, sqlite: Database.Database): Store {
  connections.set(store, sqlite);
  return store;
}

export function sqliteOf(store: Store): Database.Database {
  const sqlite = connections.get(store);
  if (!sqlite) throw new Error("not an open flagtrail store");
  return sqlite;
}

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
  /** The URL as given (with its password): for messages use the store's `location`. */
  readonly url: string;
  readonly leases: Map<string, HeldLease>;
  /** A project's own schema, or null for the URL's: leases of two projects must be two locks. */
  readonly namespace: string | null;
}

const pgConnections = new WeakMap<PgStore, PgConnection>();

export function attachPgConnection(store: PgStore, connection: PgConnection): PgStore {
  pgConnections.set(store, connection);
  return store;
}

export function pgConnectionOf(store: PgStore): PgConnection {
  const connection = pgConnections.get(store);
  if (!connection) throw new Error("not an open flagtrail PostgreSQL store");
  return connection;
}
