// PostgreSQL's bulk insert (Queries.insertRows on PostgreSQL, src/store/pg/queries.ts): COPY … FROM
// STDIN in text format through pg-copy-streams. The server parses tab-separated lines, not bind
// parameters or array literals, and the client builds one string per MiB instead of a parameter array
// per value: the sync's audit_logs rows went in at ~0.4× a server-side COPY through an unnest INSERT
// (bench/pgIngest.ts). COPY costs one more round trip than an INSERT (the server's CopyInResponse),
// so a few rows still go in as one multi-row VALUES.
import { once } from "node:events";
import { finished } from "node:stream/promises";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";

/** Fewer rows than this go in with one INSERT … VALUES: COPY's extra round trip would cost more. */
const COPY_FROM_ROWS = 32;
/** Text handed to the connection at once. */
const CHUNK_CHARS = 1 << 20;

// COPY's text format: a backslash, a tab, a newline or a carriage return in a value is escaped; NULL is \N.
const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

/**
 * A value as COPY's text format reads it: what pg sends as the bind parameter's text, escaped. The
 * store's columns are text and integers: other values are a caller's mistake, refused rather than guessed.
 */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return "\\N";
  if (typeof value === "string")
    return SPECIAL.test(value) ? value.replace(SPECIAL_ALL, (c) => ESCAPES[c] ?? c) : value;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean")
    return String(value);
  throw new Error(`insertRows: a ${typeof value} value has no column type in the store`);
}

async function insertByValues(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
): Promise<number> {
  const values = rows.map(
    (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(", ")})`,
  );
  const text = `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${values.join(", ")}`;
  return (await client.query(text, rows.flat())).rowCount ?? 0;
}

/**
 * Inserts `rows` into `table` on `client`, in row order (identity values follow it); returns how many
 * went in. `table` and `columns` are the store's own names, never user input.
 */
export async function copyRows(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
): Promise<number> {
  if (rows.length === 0) return 0;
  if (rows.length < COPY_FROM_ROWS) return insertByValues(client, table, columns, rows);
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(", ")}) FROM STDIN`));
  const done = finished(stream);
  // A server error ends the stream: `done` rejects, and so does a wait for 'drain' meanwhile.
  done.catch(() => {});
  let chunk = "";
  for (const row of rows) {
    let line = "";
    for (let c = 0; c < row.length; c++) line += (c === 0 ? "" : "\t") + copyField(row[c]);
    chunk += `${line}\n`;
    if (chunk.length >= CHUNK_CHARS) {
      if (!stream.write(chunk)) await once(stream, "drain");
      chunk = "";
    }
  }
  stream.end(chunk);
  await done;
  return stream.rowCount;
}
