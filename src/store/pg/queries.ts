// The PostgreSQL side of src/store/query.ts: the same one-text queries (drizzle's `sql`, rendered with
// $n placeholders) on the pool, or on one transaction's session.
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type pg from "pg";
import type { Queries } from "../query.ts";
import type { PgStore } from "./connection.ts";
import { pgConnectionOf } from "./connection.ts";
import { describePgError } from "./errors.ts";
import { inPgReadSnapshot } from "./readSnapshot.ts";
import { inPgTransaction } from "./transaction.ts";

// Rendered by drizzle, run by the driver itself: drizzle's execute() parses with pg's global type
// parsers, and the store's pool reads bigint as a JS number (src/store/pg/open.ts), as SQLite does.
const dialect = new PgDialect();

/** `url` null: the caller's session wrapper describes the server's errors (onPgSession). */
function queriesOn(client: pg.Pool | pg.ClientBase, url: string | null): Queries {
  const run = async (query: SQL) => {
    const { sql: text, params } = dialect.sqlToQuery(query);
    try {
      return await client.query(text, params);
    } catch (error) {
      throw url === null ? error : describePgError(error, url);
    }
  };
  return {
    dialect: "postgres",
    all: async <R>(query: SQL) => (await run(query)).rows as R[],
    get: async <R>(query: SQL) => (await run(query)).rows[0] as R | undefined,
    run: async (query: SQL) => (await run(query)).rowCount ?? 0,
    insertRows: async (table, columns, rows) => {
      let inserted = 0;
      // Multi-row VALUES, as many rows a statement as the 65,535 bind parameters allow (with room).
      const perStatement = Math.max(1, Math.floor(60_000 / columns.length));
      for (let start = 0; start < rows.length; start += perStatement) {
        const chunk = rows.slice(start, start + perStatement);
        const values = chunk.map(
          (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(", ")})`,
        );
        const text = `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${values.join(", ")}`;
        try {
          inserted += (await client.query(text, chunk.flat())).rowCount ?? 0;
        } catch (error) {
          throw url === null ? error : describePgError(error, url);
        }
      }
      return inserted;
    },
  };
}

/** Queries on one session of the pool (a transaction's), for PostgreSQL code that holds the client. */
export function pgQueriesOn(client: pg.ClientBase, store: PgStore): Queries {
  return queriesOn(client, pgConnectionOf(store).url);
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

/**
 * Queries on a session the caller holds inside its own transaction, for the PostgreSQL writers that still
 * hand a client around (src/store/pg/writes.ts, syncBatch.ts): their session wrapper describes errors.
 */
export function pgClientQueries(client: pg.ClientBase): Queries {
  return queriesOn(client, null);
}
