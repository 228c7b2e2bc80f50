// A statement or two outside a write transaction on a PostgreSQL store (the sync's reads, a run row):
// one session from the pool, given back after, the server's errors turned into one sentence with the
// password masked, as inPgTransaction does for transactions.
import { drizzle } from "drizzle-orm/node-postgres";
import type pg from "pg";
import { type PgDb, type PgStore, pgConnectionOf } from "./connection.ts";
import { describePgError } from "./errors.ts";
import * as schema from "./schema.ts";

/**
 * drizzle's query builder on a session of the pool (a transaction's): inPgTransaction and onPgSession
 * hand out the pool's own clients, which node-postgres types as the ClientBase they extend.
 */
export function pgDrizzleOn(client: pg.ClientBase): PgDb {
  return drizzle({ client: client as pg.PoolClient, schema });
}

export async function onPgSession<T>(store: PgStore, fn: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  const { pool, url } = pgConnectionOf(store);
  const client = await pool.connect().catch((error: unknown) => {
    throw describePgError(error, url);
  });
  let broken = false;
  try {
    return await fn(client);
  } catch (error) {
    broken = true;
    throw describePgError(error, url);
  } finally {
    client.release(broken || undefined);
  }
}

/** Runs drizzle's query builder on the store's pool, its errors (DrizzleQueryError wraps the driver's) described. */
export async function withPgDb<T>(store: PgStore, fn: (db: PgDb) => Promise<T>): Promise<T> {
  const { db, url } = pgConnectionOf(store);
  try {
    return await fn(db);
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    throw describePgError(typeof (cause as { code?: unknown })?.code === "string" ? cause : error, url);
  }
}

/** The rows of one statement on a session. */
export async function pgRows<R extends pg.QueryResultRow>(
  client: pg.ClientBase,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  return (await client.query<R>(text, values)).rows;
}
