// Small named values kept in the store's `meta` table by the layers above it (the daemon's last cycle,
// the demo's world), through drizzle's query builder.
import { eq, like } from "drizzle-orm";
import { drizzleOf, type Store } from "./connection.ts";
import { meta } from "./schema.ts";

export async function readMetaValue(store: Store, key: string): Promise<string | undefined> {
  return drizzleOf(store).select().from(meta).where(eq(meta.key, key)).get()?.value;
}

export async function writeMetaValue(
  store: Store,
  key: string,
  value: string,
  now = Date.now(),
): Promise<void> {
  drizzleOf(store)
    .insert(meta)
    .values({ key, value, updatedAt: now })
    .onConflictDoUpdate({ target: meta.key, set: { value, updatedAt: now } })
    .run();
}

/** Every value whose key starts with `prefix` (no LIKE wildcards in it), by key. */
export async function readMetaValuesWithPrefix(store: Store, prefix: string): Promise<Map<string, string>> {
  const rows = drizzleOf(store)
    .select()
    .from(meta)
    .where(like(meta.key, `${prefix}%`))
    .all();
  return new Map(rows.map((row) => [row.key, row.value]));
}
