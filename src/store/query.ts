// One query text for both engines: the store's style for every new query (issue 22). A query is written
// once with drizzle's `sql` template, which renders each engine's placeholders (`?` on SQLite, `$n` on
// PostgreSQL) from the same text; values are bound, never spliced. Write SQL both engines accept:
// standard joins and GROUP BY, explicit NULLS FIRST/LAST, `->>` on JSON text, integers for times
// (epoch ms), `COLLATE "binary"` where text must sort in byte order (SQLite's built-in collation; on
// PostgreSQL drizzle/pg/0005's). What truly differs goes in a fragment chosen by `dialect`, never in a
// second copy of the query.
//
// Every call is async because the PostgreSQL driver is; on SQLite the statement runs at once
// (better-sqlite3 is synchronous) and the promise is already settled.
import { type SQL, sql } from "drizzle-orm";
import { drizzleOf, type Store, sqliteOf } from "./connection.ts";
import { type AnyStore, pgSide } from "./openAny.ts";

export { type SQL, sql } from "drizzle-orm";

/** `(v1, v2, …)` for `x IN ${inList(values)}`, each value bound; `(NULL)` (matches nothing) when empty, which PostgreSQL's `IN ()` would refuse. */
export function inList(values: readonly unknown[]): SQL {
  if (values.length === 0) return sql`(NULL)`;
  return sql`(${sql.join(
    values.map((value) => sql`${value}`),
    sql`, `,
  )})`;
}

/** Where queries run: the store outside a transaction, or one transaction's session. */
export interface Queries {
  readonly dialect: "sqlite" | "postgres";
  /** Every row of `query`, as plain objects keyed by column name. */
  all<R>(query: SQL): Promise<R[]>;
  /** The first row, or undefined. */
  get<R>(query: SQL): Promise<R | undefined>;
  /** Runs a statement; returns the rows it changed. */
  run(query: SQL): Promise<number>;
}

/** The same texts run synchronously on SQLite (see sqliteQueriesNow). */
export interface SqliteQueriesNow {
  all<R>(query: SQL): R[];
  get<R>(query: SQL): R | undefined;
  run(query: SQL): number;
}

/**
 * The one query texts run at once on a SQLite store, for the few callers inside a better-sqlite3
 * transaction (the sync's batch commit, a plan's end): such a transaction cannot await, and a
 * PostgreSQL caller runs the same text through Queries instead.
 */
export function sqliteQueriesNow(store: Store): SqliteQueriesNow {
  const db = drizzleOf(store);
  return {
    all: <R>(query: SQL) => db.all<R>(query),
    get: <R>(query: SQL) => db.get<R>(query) ?? undefined,
    run: (query: SQL) => db.run(query).changes,
  };
}

function sqliteQueries(store: Store): Queries {
  const now = sqliteQueriesNow(store);
  return {
    dialect: "sqlite",
    all: async <R>(query: SQL) => now.all<R>(query),
    get: async <R>(query: SQL) => now.get<R>(query),
    run: async (query: SQL) => now.run(query),
  };
}

/** Queries on `store` outside a transaction (each statement commits on its own). */
export async function queriesOf(store: AnyStore): Promise<Queries> {
  return store.engine === "sqlite" ? sqliteQueries(store) : (await pgSide()).pgQueries(store);
}

// SQLite transactions through this module are serialised per connection: their statements run
// synchronously, but `fn` may await between them, and a second transaction begun meanwhile on the same
// connection would otherwise nest inside the first.
const sqliteTails = new WeakMap<AnyStore, Promise<unknown>>();

/**
 * Runs `fn` in one write transaction (SQLite: BEGIN IMMEDIATE, so a reader cannot deadlock us later;
 * PostgreSQL: a session of the pool). Commits when `fn` resolves, rolls back when it throws. `fn` must
 * await only the queries it is given.
 */
export async function inTransaction<T>(store: AnyStore, fn: (q: Queries) => Promise<T>): Promise<T> {
  if (store.engine === "postgres") return (await pgSide()).inPgQueriesTransaction(store, fn);
  const previous = sqliteTails.get(store) ?? Promise.resolve();
  const next = previous
    .catch(() => {})
    .then(async () => {
      const sqlite = sqliteOf(store);
      sqlite.exec("BEGIN IMMEDIATE");
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
