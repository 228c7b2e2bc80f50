// The PostgreSQL side of src/store/query.ts: the same one-text queries (drizzle's `sql`, rendered with
// $n placeholders) on the pool, or on one transaction's session.
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import pg from "pg";
import type { PgStore } from "../connection.ts";
import { pgConnectionOf } from "../connection.ts";
import type { Queries } from "../query.ts";
import { copyRows } from "./copyRows.ts";
import { describePgError } from "./errors.ts";
import { inPgReadSnapshot } from "./readSnapshot.ts";
import { inPgTransaction } from "./transaction.ts";

// Rendered by drizzle, run by the driver itself: drizzle's execute() parses with pg's global type
// parsers, and the store's pool reads bigint as a JS number (src/store/pg/open.ts), as SQLite does.
const dialect = new PgDialect();

function queriesOn(client: pg.Pool | pg.ClientBase, url: string): Queries {
  const run = async (query: SQL) => {
    const { sql: text, params } = dialect.sqlToQuery(query);
    try {
      return await client.query(text, params);
    } catch (error) {
      throw describePgError(error, url);
    }
  };
  return {
    dialect: "postgres",
    all: async <R>(query: SQL) => (await run(query)).rows as R[],
    get: async <R>(query: SQL) => (await run(query)).rows[0] as R | undefined,
    run: async (query: SQL) => (await run(query)).rowCount ?? 0,
    insertRows: async (table, columns, rows) => {
      try {
        if (!(client instanceof pg.Pool)) return await copyRows(client, table, columns, rows);
        // COPY runs on one session: the pool lends one for the statement.
        const session = await client.connect();
        try {
          return await copyRows(session, table, columns, rows);
        } finally {
          session.release();
        }
      } catch (error) {
        throw describePgError(error, url);
      }
    },
  };
}

export function pgQueries(store: PgStore): Queries {
  const { pool, url } = pgConnectionOf(store);
  return queriesOn(pool, url);
}

export async function inPgQueriesTransaction<T>(store: PgStore, fn: (q: Queries) => Promise<T>): Promise<T> {
  const { url } = pgConnectionOf(store);
  return inPgTransaction(store, (client) => fn(queriesOn(client, url)));
}

export async function inPgQueriesReadSnapshot<T>(store: PgStore, fn: (q: Queries) => Promise<T>): Promise<T> {
  const { url } = pgConnectionOf(store);
  return inPgReadSnapshot(store, (client) => fn(queriesOn(client, url)));
}
