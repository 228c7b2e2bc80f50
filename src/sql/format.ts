// The three output formats of `flagtrail sql`. Each streams: memory stays bounded whatever the row count.
// CSV and JSON carry the data as it is (JSON escapes C0 controls itself; CSV neutralises formula cells
// only); the text table writes control characters visibly (escapeControls) so a hostile value cannot
// drive the terminal it is printed on, and so does JSON written to a terminal (terminalSafeJson).
import { once } from "node:events";
import type { Writable } from "node:stream";
import { stringify } from "csv-stringify";
import { escapeControls, neutraliseFormula } from "../text/escape.ts";
import { displayWidth, padDisplay } from "../text/width.ts";

export type SqlFormat = "table" | "csv" | "json" | "nl";

/** Rows the table reads before it prints, to size its columns. */
export const TABLE_SAMPLE_ROWS = 1000;

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, "drain");
}

/**
 * What JSON.stringify leaves raw but a terminal acts on or reorders: DEL, the C1 controls (U+009B is a
 * one-character CSI), the line/paragraph separators and the bidirectional controls (U+202E).
 */
const TERMINAL_UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `json` (JSON.stringify's output) with those characters written `\uXXXX`: still the same JSON value,
 * since they can only occur inside its strings. Used when stdout is a terminal.
 */
function terminalSafeJson(json: string): string {
  return json.replace(TERMINAL_UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The JSON text of one row: escaped as above when it goes to a terminal. */
function jsonText(object: Record<string, unknown>, out: Writable): string {
  const json = JSON.stringify(object);
  return (out as { isTTY?: boolean }).isTTY === true ? terminalSafeJson(json) : json;
}

/** A PostgreSQL timestamp (node-pg gives a Date) as one text in every format: ISO 8601 in UTC. */
const dateText = (value: unknown) => (value instanceof Date ? value.toISOString() : value);

function jsonValue(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString("hex");
  if (typeof value === "bigint") return value.toString();
  return value;
}

export async function writeJson(
  rows: AsyncIterable<unknown[]>,
  columns: readonly string[],
  out: Writable,
): Promise<number> {
  let count = 0;
  await write(out, "[");
  for await (const row of rows) {
    const object: Record<string, unknown> = {};
    columns.forEach((name, i) => {
      object[name] = jsonValue(row[i]);
    });
    await write(out, `${count === 0 ? "\n" : ",\n"}  ${jsonText(object, out)}`);
    count += 1;
  }
  await write(out, count === 0 ? "]\n" : "\n]\n");
  return count;
}

/** Newline-delimited JSON (sqlite-utils' --nl): one object per line, nothing around them. */
export async function writeNdjson(
  rows: AsyncIterable<unknown[]>,
  columns: readonly string[],
  out: Writable,
): Promise<number> {
  let count = 0;
  for await (const row of rows) {
    const object: Record<string, unknown> = {};
    columns.forEach((name, i) => {
      object[name] = jsonValue(row[i]);
    });
    await write(out, `${jsonText(object, out)}\n`);
    count += 1;
  }
  return count;
}

export async function writeCsv(
  rows: AsyncIterable<unknown[]>,
  columns: readonly string[],
  out: Writable,
): Promise<number> {
  // Quote CR/LF too: with CRLF record ends csv-stringify would leave a lone LF unquoted.
  const stringifier = stringify({
    header: true,
    columns: [...columns],
    record_delimiter: "\r\n",
    quoted_match: /[\r\n]/,
  });
  stringifier.pipe(out, { end: false });
  let count = 0;
  for await (const row of rows) {
    const cells = row.map((v) =>
      v === null ? "" : neutraliseFormula(Buffer.isBuffer(v) ? v.toString("hex") : dateText(v)),
    );
    if (!stringifier.write(cells)) await once(stringifier, "drain");
    count += 1;
  }
  stringifier.end();
  await once(stringifier, "end");
  return count;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (Buffer.isBuffer(value)) return `x'${value.toString("hex")}'`;
  return escapeControls(String(dateText(value)));
}

/**
 * A text table. Column widths come from the header and the first TABLE_SAMPLE_ROWS rows, which are
 * held; the rest stream. A later cell wider than its column is printed whole (that line is longer):
 * nothing is cut, and memory stays bounded on any row count.
 */
export async function writeTable(
  rows: AsyncIterable<unknown[]>,
  columns: readonly string[],
  out: Writable,
): Promise<number> {
  const iterator = rows[Symbol.asyncIterator]();
  const sample: string[][] = [];
  let next = await iterator.next();
  while (!next.done && sample.length < TABLE_SAMPLE_ROWS) {
    sample.push(next.value.map(cellText));
    next = await iterator.next();
  }
  const header = columns.map((name) => escapeControls(name));
  const widths = header.map(displayWidth);
  for (const row of sample) {
    for (let i = 0; i < widths.length; i += 1) widths[i] = Math.max(widths[i]!, displayWidth(row[i]!));
  }
  const line = (values: readonly string[]) =>
    `${values
      .map((v, i) => padDisplay(v, widths[i]!))
      .join(" | ")
      .trimEnd()}\n`;
  await write(out, line(header));
  await write(out, `${widths.map((w) => "-".repeat(w)).join("-+-")}\n`);
  for (const row of sample) await write(out, line(row));
  let count = sample.length;
  while (!next.done) {
    await write(out, line(next.value.map(cellText)));
    count += 1;
    next = await iterator.next();
  }
  await write(out, `(${count} ${count === 1 ? "row" : "rows"})\n`);
  return count;
}
