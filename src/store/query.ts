// The store's one query style (src/store/README.md): drizzle's `sql` template, run on either engine.
// Every call is async because the PostgreSQL driver is; on SQLite the promise is already settled.
import type Database from "better-sqlite3";
import { type SQL, sql } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { type Store, sqliteOf } from "./connection.ts";
import { type AnyStore, pgSide } from "./openAny.ts";
import { columnName, type TableSpec } from "./tableKinds.ts";

export { type SQL, sql } from "drizzle-orm";

/** `(v1, v2, …)` for `x IN ${inList(values)}`, each value bound; `(NULL)` when empty (PostgreSQL refuses `IN ()`). */
export function inList(values: readonly unknown[]): SQL {
  if (values.length === 0) return sql`(NULL)`;
  const bound = values.map((value) => sql`${value}`);
  return sql`(${sql.join(bound, sql`, `)})`;
}

const keysOf = (table: TableSpec) => Object.keys(table.columns).filter((key) => key !== "id");
/** A table's columns but its serial id, in table order: what insertRows writes. */
export const columnsOf = (table: TableSpec) => keysOf(table).map(columnName);

/** insertRows into `table`'s columns (columnsOf); a row is its values in that order, or an object by column key. */
export function insertInto(q: Queries, table: TableSpec, rows: readonly (readonly unknown[] | object)[]) {
  const keys = keysOf(table);
  const values = rows.map((row) =>
    Array.isArray(row) ? row : keys.map((key) => (row as Record<string, unknown>)[key]),
  );
  return q.insertRows(table.name, keys.map(columnName), values);
}

/** Where queries run: the store outside a transaction, or one transaction's session. */
export interface Queries {
  readonly dialect: "sqlite" | "postgres";
  all<R>(query: SQL): Promise<R[]>;
  get<R>(query: SQL): Promise<R | undefined>;
  /** Runs a statement; returns the rows it changed. */
  run(query: SQL): Promise<number>;
  /** The one bulk insert, in row order (generated ids follow it); values are text, numbers or null. */
  insertRows(
    table: string,
    columns: readonly string[],
    rows: readonly (readonly unknown[])[],
  ): Promise<number>;
}

const sqliteDialect = new SQLiteSyncDialect();

// Prepared statements per connection by text: preparing costs more than running a small statement the
// entity writers run thousands of times a sync. Bounded: texts that vary (IN lists) go oldest first.
const STATEMENTS_KEPT = 200;
const statementCaches = new WeakMap<Database.Database, Map<string, Database.Statement>>();

function statementOf(sqlite: Database.Database, text: string): Database.Statement {
  let cache = statementCaches.get(sqlite);
  if (!cache) {
    cache = new Map();
    statementCaches.set(sqlite, cache);
  }
  let statement = cache.get(text);
  if (!statement) {
    statement = sqlite.prepare(text);
    if (cache.size >= STATEMENTS_KEPT) cache.delete(cache.keys().next().value!);
    cache.set(text, statement);
  }
  return statement;
}

/** `query`'s statement (prepared once per text), run by `use` with its parameters. */
function runPrepared<T>(db: Database.Database, query: SQL, use: (s: Database.Statement, p: unknown[]) => T) {
  const { sql: text, params } = sqliteDialect.sqlToQuery(query);
  return use(statementOf(db, text), params);
}

/** The same texts run at once, for callers inside a better-sqlite3 transaction (which cannot await). */
export function sqliteQueriesOn(sqlite: Database.Database) {
  return {
    all: <R>(query: SQL) => runPrepared(sqlite, query, (s, p) => s.all(...p) as R[]),
    get: <R>(query: SQL) => runPrepared(sqlite, query, (s, p) => s.get(...p) as R | undefined),
    run: (query: SQL) => runPrepared(sqlite, query, (s, p) => s.run(...p).changes),
    insertRows: (table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]) => {
      if (rows.length === 0) return 0;
      const statement = statementOf(
        sqlite,
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
      );
      let inserted = 0;
      for (const row of rows) inserted += statement.run(...row).changes;
      return inserted;
    },
  };
}

function sqliteQueries(store: Store): Queries {
  const now = sqliteQueriesOn(sqliteOf(store));
  return {
    dialect: "sqlite",
    all: async <R>(query: SQL) => now.all<R>(query),
    get: async <R>(query: SQL) => now.get<R>(query),
    run: async (query: SQL) => now.run(query),
    insertRows: async (table, columns, rows) => now.insertRows(table, columns, rows),
  };
}

/** Queries on `store` outside a transaction (each statement commits on its own). */
export async function queriesOf(store: AnyStore): Promise<Queries> {
  return store.engine === "sqlite" ? sqliteQueries(store) : (await pgSide()).pgQueries(store);
}

/** `fn`, written for a transaction's queries, as a function of a store run outside one (queriesOf). */
export function onStore<A extends unknown[], R>(fn: (q: Queries, ...args: A) => Promise<R>) {
  return async (store: AnyStore, ...args: A): Promise<R> => fn(await queriesOf(store), ...args);
}

// SQLite transactions queue per connection: `fn` may await, and one begun meanwhile would nest inside it.
const sqliteTails = new WeakMap<AnyStore, Promise<unknown>>();

/** Runs `fn` in one write transaction, rolled back if it throws. `fn` must await only the queries given. */
export async function inTransaction<T>(store: AnyStore, fn: (q: Queries) => Promise<T>): Promise<T> {
  if (store.engine === "postgres") return (await pgSide()).inPgQueriesTransaction(store, fn);
  const previous = sqliteTails.get(store) ?? Promise.resolve();
  const next = previous
    .catch(() => {})
    .then(async () => {
      const sqlite = sqliteOf(store);
      sqlite.exec("BEGIN IMMEDIATE"); // so that a reader cannot deadlock us later
      try {
        const result = await fn(sqliteQueries(store));
        sqlite.exec("COMMIT");
        return result;
      } catch (error) {
        if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
        throw error;
      }
    });
  sqliteTails.set(store, next);
  return next;
}

/** Runs `read` on one consistent read-only snapshot (PostgreSQL: REPEATABLE READ on a session of its own). */
export async function inReadSnapshot<T>(store: AnyStore, read: (q: Queries) => Promise<T>): Promise<T> {
  if (store.engine === "postgres") return (await pgSide()).inPgQueriesReadSnapshot(store, read);
  const sqlite = sqliteOf(store);
  if (sqlite.inTransaction) return read(sqliteQueries(store));
  sqlite.exec("BEGIN");
  try {
    // BEGIN is deferred: this first read is what pins the snapshot, before anything else is read.
    sqlite.prepare("SELECT count(*) FROM meta").pluck().get();
    return await read(sqliteQueries(store));
  } finally {
    sqlite.exec("COMMIT");
  }
}
