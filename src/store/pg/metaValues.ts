// Small named values in `meta` on PostgreSQL (src/store/metaValues.ts on SQLite), through drizzle's
// query builder.
import { eq, like, sql } from "drizzle-orm";
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

/** Every value whose key starts with `prefix` (no LIKE wildcards in it), by key. */
export async function readPgMetaValuesWithPrefix(
  store: PgStore,
  prefix: string,
): Promise<Map<string, string>> {
  const rows = await withPgDb(store, (db) =>
    db
      .select()
      .from(meta)
      .where(like(meta.key, `${prefix}%`)),
  );
  return new Map(rows.map((row) => [row.key, row.value]));
}

/** The schema the store's tables are in (the URL's search_path, usually public). */
export async function readPgHomeSchema(store: PgStore): Promise<string> {
  const rows = await withPgDb(store, (db) =>
    db.execute<{ name: string }>(sql`SELECT current_schema() AS name`),
  );
  const name = rows.rows[0]?.name;
  if (name === undefined) throw new Error("the PostgreSQL session has no current schema");
  return name;
}

/** Whether schema `name` exists in the store's database (a registered project's, say). */
export async function pgSchemaExists(store: PgStore, name: string): Promise<boolean> {
  const rows = await withPgDb(store, (db) =>
    db.execute<{ found: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ${name}) AS found`,
    ),
  );
  return rows.rows[0]?.found === true;
}
