// Small named values in `meta` on PostgreSQL (src/store/metaValues.ts on SQLite), through drizzle's
// query builder.
import { eq } from "drizzle-orm";
import type { PgStore } from "./connection.ts";
import { meta } from "./schema.ts";
import { withPgDb } from "./session.ts";

export async function readPgMetaValue(store: PgStore, key: string): Promise<string | undefined> {
  const [row] = await withPgDb(store, (db) => db.select().from(meta).where(eq(meta.key, key)));
  return row?.value;
}

export async function writePgMetaValue(
  store: PgStore,
  key: string,
  value: string,
  now = Date.now(),
): Promise<void> {
  await withPgDb(store, (db) =>
    db
      .insert(meta)
      .values({ key, value, updatedAt: now })
      .onConflictDoUpdate({ target: meta.key, set: { value, updatedAt: now } }),
  );
}
