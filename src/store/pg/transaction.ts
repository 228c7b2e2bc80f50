// One write transaction on a PostgreSQL store: a session from the pool, BEGIN … COMMIT, ROLLBACK on
// any throw, the server's errors turned into one sentence (password masked). The sync's writes run
// under its lease, so the default READ COMMITTED is enough: no other flagtrail writer is in the store.
import type pg from "pg";
import { type PgStore, pgConnectionOf } from "./connection.ts";
import { describePgError } from "./errors.ts";

export async function inPgTransaction<T>(
  store: PgStore,
  fn: (client: pg.ClientBase) => Promise<T>,
): Promise<T> {
  const { pool, url } = pgConnectionOf(store);
  const client = await pool.connect().catch((error: unknown) => {
    throw describePgError(error, url);
  });
  let broken = false;
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    broken = true;
    await client.query("ROLLBACK").catch(() => {});
    // The server's errors (they carry a SQLSTATE) become one sentence; flagtrail's own pass through.
    throw typeof (error as { code?: unknown }).code === "string" ? describePgError(error, url) : error;
  } finally {
    client.release(broken || undefined);
  }
}
