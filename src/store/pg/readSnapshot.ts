// One consistent, read-only view of a PostgreSQL store for the read commands (verify, report): a session
// of its own in a REPEATABLE READ, READ ONLY transaction, rolled back after, so a sync committing
// meanwhile changes nothing they see and nothing they run can write.
import type pg from "pg";
import type { PgStore } from "../connection.ts";
import { onPgSession } from "./session.ts";

/** Runs `fn` in one REPEATABLE READ, READ ONLY transaction on a session of its own, rolled back after. */
export async function inPgReadSnapshot<T>(
  store: PgStore,
  fn: (client: pg.ClientBase) => Promise<T>,
): Promise<T> {
  // onPgSession turns the server's errors into one sentence; the command's own findings pass through.
  return onPgSession(store, async (client) => {
    await client.query("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    try {
      return await fn(client);
    } finally {
      await client.query("ROLLBACK").catch(() => {});
    }
  });
}
