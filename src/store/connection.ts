// The store's connection, kept out of the Store handle: only modules in src/store/ import this file,
// so SQL and the driver stay behind the store's functions (a PostgreSQL engine implements the same
// functions over its own connection). Tests may use it to inspect a store directly.
import type Database from "better-sqlite3";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
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
