// A user's own SQL (`flagtrail sql`, the report's printed queries) on SQLite: compiled on the store's
// connection (query_only), refused unless SQLite classifies it as a read that returns rows, and run in a
// child process (queryProcess.ts) that a signal or the time limit can stop at once.
import type Database from "better-sqlite3";
import { UsageError } from "../errors.ts";
import { type Store, sqliteOf } from "./connection.ts";
import { type AnyStore, pgSide } from "./openAny.ts";
import { rowsFromChildProcess } from "./queryProcess.ts";

/** Receives the result's column names and its rows (arrays in column order); returns the row count. */
export type RowConsumer = (columns: readonly string[], rows: AsyncIterable<unknown[]>) => Promise<number>;

function sqlError(error: unknown): unknown {
  return error instanceof Error && error.name === "SqliteError"
    ? new UsageError(`SQL error: ${error.message}`)
    : error;
}

/** Compiling and binding errors (a missing named parameter: RangeError/TypeError) are bad input all the same. */
function binding<T>(bind: () => T): T {
  try {
    return bind();
  } catch (error) {
    throw error instanceof Error ? new UsageError(`SQL error: ${error.message}`) : error;
  }
}

function start(statement: Database.Statement, params: Record<string, unknown>): IterableIterator<unknown[]> {
  return binding(() => statement.raw(true).iterate(params) as IterableIterator<unknown[]>);
}

/**
 * The rows as an async iterator whose `return()` resets the statement even before the first row was
 * read (a generator not yet started would skip its cleanup): the connection can then be closed when a
 * consumer gives up early, a closed pipe or a query over several projects failing in another project.
 */
function stream(rows: IterableIterator<unknown[]>): AsyncIterableIterator<unknown[]> {
  const iterator: AsyncIterableIterator<unknown[]> = {
    [Symbol.asyncIterator]: () => iterator,
    next: async () => {
      try {
        return rows.next();
      } catch (error) {
        throw sqlError(error);
      }
    },
    return: async () => {
      rows.return?.();
      return { done: true, value: undefined };
    },
  };
  return iterator;
}

/** SQL that does not compile (or holds more than one statement) is the user's input at fault: UsageError. */
function compile(store: Store, sql: string): Database.Statement {
  const sqlite = sqliteOf(store);
  // Layer 2 of the read-only guarantee: whatever SQLite classified wrongly is refused when it runs.
  sqlite.pragma("query_only = ON");
  return binding(() => sqlite.prepare(sql));
}

/**
 * Runs `query` (opened read-only, `@name` parameters) and hands its columns and rows to `consume`; returns
 * its count. Parameters bind at once (a missing one throws before any output); rows are read as consumed,
 * the query stopped (QueryTimeoutError) once it has worked `timeoutMs` in all.
 */
export async function queryReadOnly(
  store: AnyStore,
  query: string,
  params: Record<string, unknown>,
  consume: RowConsumer,
  timeoutMs: number,
): Promise<number> {
  if (store.engine === "postgres") {
    return (await pgSide()).queryPgReadOnly(store, query, params, consume, timeoutMs);
  }
  const statement = compile(store, query);
  // Layer 1: anything that may write — VACUUM INTO, temp DDL, UPDATE … RETURNING, a writing PRAGMA —
  // is refused here, before it runs. Not string matching: SQLite decides (sqlite3_stmt_readonly).
  if (!statement.readonly) {
    throw new UsageError(
      "refused: SQLite classifies this statement as one that writes (flagtrail sql is read-only; nothing was run)",
    );
  }
  // Statements that return no rows (ATTACH, BEGIN, a PRAGMA that only sets, …) are not queries: not run either.
  if (!statement.reader) {
    throw new UsageError(
      "refused: the statement returns no rows (flagtrail sql runs queries only; nothing was run)",
    );
  }
  const columns = statement.columns().map((c) => c.name);
  // An in-memory store (tests) has no file a second connection could open: it runs here, unstoppable.
  if (store.path === ":memory:") return consume(columns, stream(start(statement, params)));
  binding(() => statement.bind(params)); // bad parameters fail here, before the child starts
  return consume(columns, rowsFromChildProcess({ path: store.path, sql: query, params, timeoutMs }));
}
