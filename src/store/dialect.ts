// What truly differs between the engines, as small SQL fragments chosen by `q.dialect` (src/store/README.md).
import { keysetPages } from "../keyset.ts";
import { type Queries, type SQL, sql } from "./query.ts";

export type Dialect = Queries["dialect"];

/** A JSON object as text from key names and SQL values; spacing differs by engine: JSON.parse, never compare. */
export function jsonObjectText(dialect: Dialect, entries: readonly (readonly [string, SQL])[]): SQL {
  const args = sql.join(
    entries.map(([key, value]) => sql`${sql.raw(`'${key}'`)}, ${value}`),
    sql`, `,
  );
  return dialect === "sqlite" ? sql`json_object(${args})` : sql`json_build_object(${args})::text`;
}

/** How many rows a keyset page reads (pagesOf): memory stays bounded on a long table. */
const PAGE_ROWS = 1000;

/** A long read a page at a time (`page` ends `WHERE key > after ORDER BY key LIMIT limit`): no open cursor. */
export function pagesOf<T extends Record<string, unknown>>(
  q: Queries,
  page: (after: unknown, limit: number) => SQL,
  key: keyof T,
): AsyncGenerator<T[]> {
  return keysetPages((after, limit) => q.all<T>(page(after, limit)), {
    first: -1 as unknown,
    limit: PAGE_ROWS,
    keyOf: (row) => row[key],
  });
}

export async function* rowsOf<T>(pages: AsyncIterable<T[]>): AsyncGenerator<T> {
  for await (const page of pages) yield* page;
}
