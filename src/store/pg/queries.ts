// The PostgreSQL side of src/store/query.ts: the one-text queries on the pool or on a transaction's session.
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core/dialect";
import pg from "pg";
import { type PgStore, pgConnectionOf } from "../connection.ts";
import type { Queries } from "../query.ts";
import { copyRows } from "./copyRows.ts";
import { describePgError } from "./errors.ts";

/** `fn` in one transaction (`begin`) on a session of its own: committed (if `commit`) or rolled back. */
async function inPgSessionTransaction<T>(
  store: PgStore,
  begin: string,
  commit: boolean,
  fn: (client: pg.ClientBase) => Promise<T>,
): Promise<T> {
  const { pool, url } = pgConnectionOf(store);
  const client = await pool.connect().catch((error: unknown) => {
    throw describePgError(error, url);
  });
  let broken = false;
  try {
    await client.query(begin);
    try {
      const result = await fn(client);
      if (commit) await client.query("COMMIT");
      else await client.query("ROLLBACK").catch(() => {});
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  } catch (error) {
    broken = true;
    throw describePgError(error, url);
  } finally {
    client.release(broken || undefined);
  }
}

/** One consistent read-only view (verify, report): a sync committing meanwhile changes nothing they see. */
export const inPgReadSnapshot = <T>(store: PgStore, fn: (client: pg.ClientBase) => Promise<T>) =>
  inPgSessionTransaction(store, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", false, fn);

// Rendered by drizzle, run by the driver: drizzle's execute() would parse with pg's global type parsers,
// not the pool's (bigint as a JS number, pg/open.ts).
const dialect = new PgDialect();

function queriesOn(client: pg.Pool | pg.ClientBase, store: PgStore): Queries {
  const { url } = pgConnectionOf(store);
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

export const pgQueries = (store: PgStore): Queries => queriesOn(pgConnectionOf(store).pool, store);

/** One write transaction: READ COMMITTED is enough, the sync's lease keeps other writers out. */
export const inPgQueriesTransaction = <T>(store: PgStore, fn: (q: Queries) => Promise<T>): Promise<T> =>
  inPgSessionTransaction(store, "BEGIN", true, (client) => fn(queriesOn(client, store)));

export const inPgQueriesReadSnapshot = <T>(store: PgStore, fn: (q: Queries) => Promise<T>): Promise<T> =>
  inPgReadSnapshot(store, (client) => fn(queriesOn(client, store)));
