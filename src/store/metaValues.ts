// Small named values kept in the store's `meta` table by the layers above it (the daemon's last cycle,
// the demo's world), one query text for both engines (src/store/query.ts).
import type { AnyStore } from "./openAny.ts";
import { queriesOf, sql } from "./query.ts";

export async function readMetaValue(store: AnyStore, key: string): Promise<string | undefined> {
  const q = await queriesOf(store);
  return (await q.get<{ value: string }>(sql`SELECT value FROM meta WHERE key = ${key}`))?.value;
}

export async function writeMetaValue(
  store: AnyStore,
  key: string,
  value: string,
  now = Date.now(),
): Promise<void> {
  const q = await queriesOf(store);
  await q.run(
    sql`INSERT INTO meta (key, value, updated_at) VALUES (${key}, ${value}, ${now})
        ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  );
}

/**
 * Every value whose key starts with `prefix`, by key. A prefix compared with substr, not LIKE: SQLite's
 * LIKE ignores ASCII case and PostgreSQL's does not, and either would read `%` or `_` in `prefix` as a wildcard.
 */
export async function readMetaValuesWithPrefix(
  store: AnyStore,
  prefix: string,
): Promise<Map<string, string>> {
  const q = await queriesOf(store);
  // Both engines count substr's length in characters (code points), not UTF-16 units.
  const length = [...prefix].length;
  const rows = await q.all<{ key: string; value: string }>(
    sql`SELECT key, value FROM meta WHERE substr(key, 1, ${length}) = ${prefix} ORDER BY key COLLATE "binary"`,
  );
  return new Map(rows.map((row) => [row.key, row.value]));
}
