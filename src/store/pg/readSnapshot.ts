// One consistent, read-only view of a PostgreSQL store for the read commands (verify, report): a session
// of its own in a REPEATABLE READ, READ ONLY transaction, rolled back after, so a sync committing
// meanwhile changes nothing they see and nothing they run can write.
import type pg from "pg";
import { type PgStore, pgConnectionOf } from "./connection.ts";
import { describePgError } from "./errors.ts";

/** Runs `fn` in one REPEATABLE READ, READ ONLY transaction on a session of its own, rolled back after. */
export async function inPgReadSnapshot<T>(
  store: PgStore,
  fn: (client: pg.ClientBase) => Promise<T>,
): Promise<T> {
  const { pool, url } = pgConnectionOf(store);
  const client = await pool.connect().catch((error: unknown) => {
    throw describePgError(error, url);
  });
  let broken = false;
  try {
    await client.query("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    return await fn(client);
  } catch (error) {
    broken = true;
    // The server's errors (they carry a SQLSTATE) become one sentence; the command's own findings pass through.
    throw typeof (error as { code?: unknown }).code === "string" ? describePgError(error, url) : error;
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    client.release(broken || undefined);
  }
}
