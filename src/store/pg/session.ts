// A statement or two outside a write transaction on a PostgreSQL store (the sync's reads, a run row):
// one session from the pool, given back after, the server's errors turned into one sentence with the
// password masked, as inPgTransaction does for transactions.
import type pg from "pg";
import { type PgStore, pgConnectionOf } from "../connection.ts";
import { describePgError } from "./errors.ts";

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
