// Streaming a query into an RFC 4180 CSV file: row batches from the store → CSV text, one batch at a
// time → file. pipeline() pulls batches only as fast as the file takes them (bounded memory) and tears
// everything down, closing the store's row stream too, when any stage fails.
import { createWriteStream, fchmodSync, openSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { neutraliseFormula } from "./escape.ts";

export interface CsvColumn<Row> {
  header: string;
  value: (row: Row) => string | number | null;
}

const RECORD_END = "\r\n";
// Quote a field holding CR or LF as well as delimiter and quote (RFC 4180 section 2.6): with CRLF record
// ends a lone LF left unquoted would split the record for some readers.
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One field: null as empty, a number as String(n), text quoted (inner quotes doubled) when it holds a
 * comma, a quote, CR or LF. The bytes csv-stringify wrote with the same rules (test/report/csv.test.ts
 * compares the two); written here because the library's per-field option handling was a sixth of the
 * one-month 1M-record report's CPU (bench/report.ts).
 */
export function csvField(value: string | number | null): string {
  if (value === null) return "";
  if (typeof value === "number") return String(value);
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One record with its CRLF end. */
export function csvRecord(fields: readonly (string | number | null)[]): string {
  let line = "";
  for (let i = 0; i < fields.length; i += 1)
    line += i === 0 ? csvField(fields[i]!) : `,${csvField(fields[i]!)}`;
  return line + RECORD_END;
}

/**
 * A row's record, formula-neutralised, straight from the columns (csvRecord's bytes): no array of
 * fields per row, which on a one-month 1M-record report was a sixth of the CSVs' CPU with its garbage.
 */
export function rowRecord<Row>(columns: readonly CsvColumn<Row>[], row: Row): string {
  let line = csvField(neutraliseFormula(columns[0]!.value(row)));
  for (let i = 1; i < columns.length; i += 1)
    line += `,${csvField(neutraliseFormula(columns[i]!.value(row)))}`;
  return line + RECORD_END;
}

/** The UTF-8 byte-order mark: without it LibreOffice's and Excel's default import read UTF-8 as Latin-1. */
export const BOM = "\uFEFF";

/**
 * Writes header + one line per row, creating the file 0600 whatever the umask, and fsyncs it; returns
 * the number of data rows. CRLF line ends (RFC 4180); a UTF-8 byte-order mark first when `bom`;
 * `onRow` sees each row as it is written (for figures read from the same rows).
 */
export async function writeCsv<Row>(
  path: string,
  columns: readonly CsvColumn<Row>[],
  batches: AsyncIterable<readonly Row[]>,
  options: { bom: boolean; onRow?: (row: Row) => void },
): Promise<number> {
  let count = 0;
  // Each batch becomes one chunk of text: a record costs no await of its own.
  async function* chunks(): AsyncGenerator<string> {
    if (options.bom) yield BOM;
    yield csvRecord(columns.map((c) => c.header));
    for await (const batch of batches) {
      count += batch.length;
      let text = "";
      for (const row of batch) {
        options.onRow?.(row);
        text += rowRecord(columns, row);
      }
      yield text;
    }
  }
  const fd = openSync(path, "w", 0o600);
  fchmodSync(fd, 0o600);
  // Larger buffer than the 16 KiB default: fewer waits, still a fixed amount of memory. The stream
  // closes the descriptor when done; flush: the report set is published only after the bytes are durable.
  await pipeline(
    Readable.from(chunks()),
    createWriteStream(path, { fd, highWaterMark: 1 << 20, flush: true }),
  );
  return count;
}
