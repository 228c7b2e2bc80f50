// `flagtrail sql`: one statement on a read-only connection, rows printed as a table, CSV or JSON.
// Writes are refused by SQLite itself, never by looking at the SQL text, in two layers: a statement
// SQLite classifies as not read-only (sqlite3_stmt_readonly) is refused before it runs, and the
// connection is opened SQLITE_OPEN_READONLY with `PRAGMA query_only = ON`. A refused statement and SQL
// that does not compile are usage errors (exit 2).
import { once } from "node:events";
import type { Writable } from "node:stream";
import type Database from "better-sqlite3";
import { stringify } from "csv-stringify";
import { UsageError } from "../errors.ts";
import { neutraliseFormula } from "./escape.ts";

export type SqlFormat = "table" | "csv" | "json";

function prepare(sqlite: Database.Database, query: string): Database.Statement {
  try {
    return sqlite.prepare(query);
  } catch (error) {
    throw new UsageError(`SQL error: ${(error as Error).message}`);
  }
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (Buffer.isBuffer(value)) return `x'${value.toString("hex")}'`;
  return String(value);
}

function jsonValue(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString("hex");
  if (typeof value === "bigint") return value.toString();
  return value;
}

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, "drain");
}

/**
 * Runs `query` and writes its rows to `out`; returns the number of rows. The connection should be opened
 * read-only; it is also switched to `PRAGMA query_only = ON` (layer 2: whatever passed the check below
 * is refused by SQLite when it runs).
 */
export async function runSql(
  sqlite: Database.Database,
  query: string,
  format: SqlFormat,
  out: Writable,
  params: Record<string, unknown> = {},
): Promise<number> {
  sqlite.pragma("query_only = ON");
  const statement = prepare(sqlite, query);
  // Layer 1: SQLite's own classification of the compiled statement (sqlite3_stmt_readonly). Anything
  // that may write — VACUUM INTO, temp DDL, UPDATE … RETURNING, a writing PRAGMA — is refused here,
  // before it runs. Not string matching: SQLite decides.
  if (!statement.readonly) {
    throw new UsageError(
      "refused: SQLite classifies this statement as one that writes (flagtrail sql is read-only; nothing was run)",
    );
  }
  // Statements that return no rows (ATTACH, BEGIN, …) are not queries: not run either.
  if (!statement.reader) {
    throw new UsageError(
      "refused: the statement returns no rows (flagtrail sql runs queries only; nothing was run)",
    );
  }
  const columns = statement.columns().map((c) => c.name);
  let rows: IterableIterator<unknown[]>;
  try {
    rows = statement.raw(true).iterate(params) as IterableIterator<unknown[]>;
  } catch (error) {
    throw new UsageError(`SQL error: ${(error as Error).message}`);
  }
  try {
    if (format === "json") return await writeJson(rows, columns, out);
    if (format === "csv") return await writeCsvRows(rows, columns, out);
    return await writeTable(rows, columns, out);
  } catch (error) {
    if (error instanceof Error && error.name === "SqliteError")
      throw new UsageError(`SQL error: ${error.message}`);
    throw error;
  }
}

async function writeJson(
  rows: IterableIterator<unknown[]>,
  columns: string[],
  out: Writable,
): Promise<number> {
  let count = 0;
  await write(out, "[");
  for (const row of rows) {
    const object: Record<string, unknown> = {};
    columns.forEach((name, i) => {
      object[name] = jsonValue(row[i]);
    });
    await write(out, `${count === 0 ? "\n" : ",\n"}  ${JSON.stringify(object)}`);
    count += 1;
  }
  await write(out, count === 0 ? "]\n" : "\n]\n");
  return count;
}

async function writeCsvRows(
  rows: IterableIterator<unknown[]>,
  columns: string[],
  out: Writable,
): Promise<number> {
  // Quote CR/LF too: with CRLF record ends csv-stringify would leave a lone LF unquoted.
  const stringifier = stringify({ header: true, columns, record_delimiter: "\r\n", quoted_match: /[\r\n]/ });
  stringifier.pipe(out, { end: false });
  let count = 0;
  for (const row of rows) {
    const cells = row.map((v) =>
      v === null ? "" : neutraliseFormula(Buffer.isBuffer(v) ? v.toString("hex") : v),
    );
    if (!stringifier.write(cells)) await once(stringifier, "drain");
    count += 1;
  }
  stringifier.end();
  await once(stringifier, "end");
  return count;
}

/** A text table needs every width before the first line: it holds the rows (use csv/json for big results). */
async function writeTable(
  rows: IterableIterator<unknown[]>,
  columns: string[],
  out: Writable,
): Promise<number> {
  const cells = [...rows].map((row) =>
    row.map((v) =>
      cellText(v)
        .replace(/\r\n|\r|\n/g, "\\n")
        .replace(/\t/g, " "),
    ),
  );
  const widths = columns.map((name, i) => Math.max(name.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    `${values
      .map((v, i) => v.padEnd(widths[i]!))
      .join(" | ")
      .trimEnd()}\n`;
  await write(out, line(columns));
  await write(out, `${widths.map((w) => "-".repeat(w)).join("-+-")}\n`);
  for (const row of cells) await write(out, line(row));
  await write(out, `(${cells.length} ${cells.length === 1 ? "row" : "rows"})\n`);
  return cells.length;
}
