// Each engine's connection, kept out of the store's handle: only modules in src/store/ import this file,
// so SQL and the drivers stay behind the store's functions. Tests may use it to inspect a store directly.
// Type-only imports of the drivers: a SQLite store still loads no PostgreSQL module (src/store/openAny.ts).
import type Database from "better-sqlite3";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import type pg from "pg";
import type * as pgSchema from "./pg/schema.ts";
import type * as schema from "./schema.ts";

type Db = BetterSQLite3Database<typeof schema>;

/** An open store: where it is and how to close it. Its connection is reachable only through this module. */
export interface Store {
  readonly engine: "sqlite";
  readonly path: string;
  /** Where the store is, as shown to a person (the file path). */
  readonly location: string;
  readonly readonly: boolean;
  close(): void;
}

interface Connection {
  sqlite: Database.Database;
  db: Db;
}

const connections = new WeakMap<Store, Connection>();

export function attachConnection(store: Store, connection: Connection): Store {
  connections.set(store, connection);
  return store;
}

function connectionOf(store: Store): Connection {
  const connection = connections.get(store);
  if (!connection) throw new Error("not an open flagtrail store");
  return connection;
}

export function sqliteOf(store: Store): Database.Database {
  return connectionOf(store).sqlite;
}

// ---- PostgreSQL: the pool, the drizzle handle and the leases' sessions, behind a PgStore ----

export type PgDb = NodePgDatabase<typeof pgSchema>;

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

export function pgDrizzleOf(store: PgStore): PgDb {
  return pgConnectionOf(store).db;
}
