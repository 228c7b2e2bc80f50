// Streaming a query into an RFC 4180 CSV file: better-sqlite3 rows → csv-stringify → file, with
// backpressure, so memory stays flat however many rows the period holds.
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { finished } from "node:stream/promises";
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
  const stringifier = stringify({
    header: true,
    columns: columns.map((c) => c.header),
    record_delimiter: "\r\n",
    // Quote a field when it holds a delimiter, quote, CR or LF (RFC 4180 section 2.6).
    quoted_match: /[\r\n]/,
    cast: { number: (n) => String(n) },
  });
  const file = createWriteStream(path, { mode: 0o600 });
  stringifier.pipe(file);
  let count = 0;
  try {
    for (const row of rows) {
      const record = columns.map((c) => neutraliseFormula(c.value(row)) ?? "");
      count += 1;
      if (!stringifier.write(record)) await once(stringifier, "drain");
    }
  } finally {
    stringifier.end();
    await finished(file);
  }
  return count;
}
