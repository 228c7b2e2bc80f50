// `flagtrail sql`: one statement, rows printed as a table, CSV or JSON. Writes are refused by SQLite
// itself, never by looking at the SQL text, in two layers: a statement SQLite classifies as not
// read-only (sqlite3_stmt_readonly) is refused before it runs, and the store runs it on a
// read-only connection with `PRAGMA query_only = ON` (src/store/readOnlyQuery.ts). A refused statement
// and SQL that does not compile are usage errors (exit 2). On PostgreSQL the statement runs in a READ ONLY
// transaction and the server refuses a write (src/store/pg/readOnlyQuery.ts), also exit 2.
// On a store of several projects the statement runs in each project's part, each in a read-only
// snapshot of its own, and the rows come out as one result whose first column names the project.
import type { Writable } from "node:stream";
import { FlagtrailError, UsageError } from "../errors.ts";
import type { AnyStore } from "../store/openAny.ts";
import type { ProjectStore } from "../store/projectStores.ts";
import { queryReadOnly as queryRows, type RowConsumer } from "../store/readOnlyQuery.ts";
import { type SqlFormat, writeCsv, writeJson, writeNdjson, writeTable } from "./format.ts";

export type { SqlFormat } from "./format.ts";

/** How long a query may work, by default (`--timeout`): then it is stopped, exit 1. */
export const DEFAULT_TIMEOUT_SECONDS = 60;
const DEFAULT_TIMEOUT_MS = DEFAULT_TIMEOUT_SECONDS * 1000;

/** The first column of a result read from several projects: the project each row comes from. */
const PROJECT_COLUMN = "project";

function writerFor(format: SqlFormat, out: Writable): RowConsumer {
  return (columns, rows) =>
    format === "json"
      ? writeJson(rows, columns, out)
      : format === "nl"
        ? writeNdjson(rows, columns, out)
        : format === "csv"
          ? writeCsv(rows, columns, out)
          : writeTable(rows, columns, out);
}

/** Runs `query` on `store` (opened read-only) and writes its rows to `out`; returns the row count. */
export async function runSql(
  store: AnyStore,
  query: string,
  format: SqlFormat,
  out: Writable,
  params: Record<string, unknown> = {},
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<number> {
  return queryRows(store, query, params, writerFor(format, out), timeoutMs);
}

interface ProjectRows {
  project: string;
  columns: readonly string[];
  rows: AsyncIterable<unknown[]>;
}

/** The combined result's columns: `project`, then the query's, which every project must give alike. */
function combinedColumns(results: readonly ProjectRows[]): string[] {
  const [first] = results;
  const columns = first?.columns ?? [];
  for (const other of results) {
    if (other.columns.join("\u0000") !== columns.join("\u0000")) {
      throw new FlagtrailError(
        `The query gives different columns in project ${first?.project} (${columns.join(", ")}) and in project ${other.project} (${other.columns.join(", ")}), so its rows cannot make one result.`,
      );
    }
  }
  if (columns.includes(PROJECT_COLUMN)) {
    throw new UsageError(
      `refused: the query's result has a column named ${PROJECT_COLUMN}, the column that names each row's project when several projects are read; name it otherwise (AS …)`,
    );
  }
  return [PROJECT_COLUMN, ...columns];
}

async function* concatenated(results: readonly ProjectRows[]): AsyncGenerator<unknown[]> {
  for (const { project, rows } of results) {
    for await (const row of rows) yield [project, ...row];
  }
}

/**
 * Runs `query` in each project's part of the store, in the order given, and writes one result whose
 * first column is the project. Every project's statement is compiled (on PostgreSQL, its read-only
 * transaction opened and its cursor declared) before the first row is written, so bad SQL, a refused
 * write or columns that differ print nothing. Returns the row count.
 */
export async function runSqlInProjects(
  projects: readonly ProjectStore[],
  query: string,
  format: SqlFormat,
  out: Writable,
  params: Record<string, unknown> = {},
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<number> {
  const write = writerFor(format, out);
  const opened: ProjectRows[] = [];
  // Each project's rows are only readable inside its query's callback: open the next one inside it.
  const openFrom = async (index: number): Promise<number> => {
    const next = projects[index];
    if (next === undefined) return write(combinedColumns(opened), concatenated(opened));
    const consume: RowConsumer = async (columns, rows) => {
      opened.push({ project: next.project, columns, rows });
      try {
        return await openFrom(index + 1);
      } finally {
        // Rows left unread (a failure after this project's query opened) must not keep it running.
        await rows[Symbol.asyncIterator]().return?.();
      }
    };
    return queryRows(next.store, query, params, consume, timeoutMs);
  };
  return openFrom(0);
}
