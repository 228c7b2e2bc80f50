// One write transaction on a PostgreSQL store: a session from the pool (onPgSession: errors as one
// sentence, password masked), BEGIN … COMMIT, ROLLBACK on any throw. The sync's writes run under its
// lease, so the default READ COMMITTED is enough: no other flagtrail writer is in the store.
import type pg from "pg";
import type { PgStore } from "../connection.ts";
import { onPgSession } from "./session.ts";

export async function inPgTransaction<T>(
  store: PgStore,
  fn: (client: pg.ClientBase) => Promise<T>,
): Promise<T> {
  return onPgSession(store, async (client) => {
    await client.query("BEGIN");
    try {
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  });
}
