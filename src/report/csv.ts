// Streaming a query into an RFC 4180 CSV file: better-sqlite3 rows → csv-stringify → file. pipeline()
// pulls rows only as fast as the file takes them (bounded memory) and tears everything down, closing
// the SQLite iterator too, when any stage fails.
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { stringify } from "csv-stringify";
import { neutraliseFormula } from "./escape.ts";

export interface CsvColumn<Row> {
  header: string;
  value: (row: Row) => string | number | null;
}

/** Writes header + one line per row; returns the number of data rows. CRLF line ends (RFC 4180). */
export async function writeCsv<Row>(
  path: string,
  columns: readonly CsvColumn<Row>[],
  rows: Iterable<Row>,
): Promise<number> {
  let count = 0;
  function* records(): Generator<(string | number)[]> {
    for (const row of rows) {
      count += 1;
      yield columns.map((c) => neutraliseFormula(c.value(row)) ?? "");
    }
  }
  await pipeline(
    Readable.from(records(), { objectMode: true, highWaterMark: 256 }),
    stringify({
      header: true,
      columns: columns.map((c) => c.header),
      record_delimiter: "\r\n",
      // Quote a field holding CR or LF as well as delimiter and quote (RFC 4180 section 2.6): with CRLF
      // record ends csv-stringify would otherwise leave a lone LF unquoted.
      quoted_match: /[\r\n]/,
      cast: { number: (n) => String(n) },
    }),
    // Larger buffer than the 16 KiB default: fewer waits, still a fixed amount of memory.
    createWriteStream(path, { mode: 0o600, highWaterMark: 1 << 20 }),
  );
  return count;
}
