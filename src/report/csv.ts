// Streaming a query into an RFC 4180 CSV file: row batches from the store → csv-stringify, one batch at
// a time → file. pipeline() pulls batches only as fast as the file takes them (bounded memory) and tears
// everything down, closing the store's row stream too, when any stage fails.
import { createWriteStream, fchmodSync, openSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type Options, stringify } from "csv-stringify/sync";
import { neutraliseFormula } from "./escape.ts";

export interface CsvColumn<Row> {
  header: string;
  value: (row: Row) => string | number | null;
}

const CSV_OPTIONS: Options = {
  record_delimiter: "\r\n",
  // Quote a field holding CR or LF as well as delimiter and quote (RFC 4180 section 2.6): with CRLF
  // record ends csv-stringify would otherwise leave a lone LF unquoted.
  quoted_match: /[\r\n]/,
  cast: { number: (n) => String(n) },
};

/** The UTF-8 byte-order mark: without it LibreOffice's and Excel's default import read UTF-8 as Latin-1. */
const BOM = "\uFEFF";

/**
 * Writes header + one line per row, creating the file 0600 whatever the umask, and fsyncs it; returns
 * the number of data rows. CRLF line ends (RFC 4180); a UTF-8 byte-order mark first when `bom`.
 */
export async function writeCsv<Row>(
  path: string,
  columns: readonly CsvColumn<Row>[],
  batches: AsyncIterable<readonly Row[]>,
  options: { bom: boolean },
): Promise<number> {
  let count = 0;
  // Each batch becomes one chunk of text: a record costs no await of its own.
  async function* chunks(): AsyncGenerator<string> {
    if (options.bom) yield BOM;
    yield stringify([], { ...CSV_OPTIONS, header: true, columns: columns.map((c) => c.header) });
    for await (const batch of batches) {
      count += batch.length;
      yield stringify(
        batch.map((row) => columns.map((c) => neutraliseFormula(c.value(row)) ?? "")),
        CSV_OPTIONS,
      );
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
