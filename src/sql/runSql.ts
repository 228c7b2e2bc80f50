// `flagtrail sql`: one statement, rows printed as a table, CSV or JSON. Writes are refused by SQLite
// itself, never by looking at the SQL text, in two layers: a statement SQLite classifies as not
// read-only (sqlite3_stmt_readonly) is refused here before it runs, and the store runs it on a
// read-only connection with `PRAGMA query_only = ON` (src/store/readOnlyQuery.ts). A refused statement
// and SQL that does not compile are usage errors (exit 2). On PostgreSQL the statement runs in a READ ONLY
// transaction and the server refuses a write (src/store/pg/readOnlyQuery.ts), also exit 2.
import type { Writable } from "node:stream";
import { UsageError } from "../errors.ts";
import type { AnyStore } from "../store/openAny.ts";
import { queryPgReadOnly } from "../store/pg/readOnlyQuery.ts";
import { prepareReadOnlyQuery } from "../store/readOnlyQuery.ts";
import { type SqlFormat, writeCsv, writeJson, writeNdjson, writeTable } from "./format.ts";

export type { SqlFormat } from "./format.ts";

/** Runs `query` on `store` (opened read-only) and writes its rows to `out`; returns the row count. */
export async function runSql(
  store: AnyStore,
  query: string,
  format: SqlFormat,
  out: Writable,
  params: Record<string, unknown> = {},
): Promise<number> {
  const write = (columns: readonly string[], rows: AsyncIterable<unknown[]>) =>
    format === "json"
      ? writeJson(rows, columns, out)
      : format === "nl"
        ? writeNdjson(rows, columns, out)
        : format === "csv"
          ? writeCsv(rows, columns, out)
          : writeTable(rows, columns, out);
  if (store.engine === "postgres") return queryPgReadOnly(store, query, params, write);
  const statement = await prepareReadOnlyQuery(store, query);
  // Layer 1: anything that may write — VACUUM INTO, temp DDL, UPDATE … RETURNING, a writing PRAGMA —
  // is refused here, before it runs. Not string matching: SQLite decides.
  if (!statement.readOnly) {
    throw new UsageError(
      "refused: SQLite classifies this statement as one that writes (flagtrail sql is read-only; nothing was run)",
    );
  }
  // Statements that return no rows (ATTACH, BEGIN, …) are not queries: not run either.
  if (!statement.returnsRows) {
    throw new UsageError(
      "refused: the statement returns no rows (flagtrail sql runs queries only; nothing was run)",
    );
  }
  return write(statement.columns, statement.rows(params));
}
