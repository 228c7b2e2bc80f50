// Small named values kept in the store's `meta` table; the texts also run in transactions and synchronously.
import type { AnyStore } from "./openAny.ts";
import { onStore, type Queries, queriesOf, type SQL, sql } from "./query.ts";

export const writeMetaValueQuery = (key: string, value: string, now: number): SQL =>
  writeMetaValuesQuery([[key, value]], now);

/** Several values in one statement (one round trip on PostgreSQL); each key at most once. */
export function writeMetaValuesQuery(entries: readonly MetaEntry[], now: number): SQL {
  const rows = entries.map(([key, value]) => sql`(${key}, ${value}, ${now})`);
  return sql`INSERT INTO meta (key, value, updated_at) VALUES ${sql.join(rows, sql`, `)}
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;
}

/** A meta key and the value to store under it. */
export type MetaEntry = readonly [key: string, value: string];

export const deleteMetaValueQuery = (key: string): SQL => sql`DELETE FROM meta WHERE key = ${key}`;

export async function readMetaValueIn(q: Queries, key: string): Promise<string | undefined> {
  return (await q.get<{ value: string }>(sql`SELECT value FROM meta WHERE key = ${key}`))?.value;
}

export const readMetaValue = onStore(readMetaValueIn);

export async function writeMetaValue(store: AnyStore, key: string, value: string, now = Date.now()) {
  await (await queriesOf(store)).run(writeMetaValueQuery(key, value, now));
}

/** Every value whose key starts with `prefix`, by key (substr: LIKE's case rules differ, `%`/`_` are wild). */
export async function readMetaValuesWithPrefix(store: AnyStore, prefix: string) {
  // Both engines count substr's length in characters (code points), not UTF-16 units.
  const length = [...prefix].length;
  const rows = await (await queriesOf(store)).all<{ key: string; value: string }>(
    sql`SELECT key, value FROM meta WHERE substr(key, 1, ${length}) = ${prefix} ORDER BY key COLLATE "binary"`,
  );
  return new Map(rows.map((row) => [row.key, row.value]));
}
