import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "csv-stringify/sync";
import { describe, expect, it } from "vitest";
import { csvRecord, writeCsv } from "../../src/report/csv.ts";
import { neutraliseFormula } from "../../src/report/escape.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";

describe("neutraliseFormula", () => {
  it("prefixes text a spreadsheet would evaluate, and nothing else", () => {
    for (const cell of ["=1+2", "+1", "-1", "@SUM(A1)", "\t=x", "\r=x"])
      expect(neutraliseFormula(cell)).toBe(`'${cell}`);
    for (const cell of ["a=b", "1-2", " =x", ""]) expect(neutraliseFormula(cell)).toBe(cell);
    expect(neutraliseFormula(-5)).toBe(-5);
    expect(neutraliseFormula(null)).toBeNull();
  });
});

/** Rows as the store hands them over: batches, the statement started at the first one. */
async function* inBatches<Row>(start: () => IterableIterator<Row>): AsyncGenerator<Row[]> {
  const rows = [...start()];
  for (let i = 0; i < rows.length; i += 2) yield rows.slice(i, i + 2);
}

describe("writeCsv", () => {
  it("streams rows from SQLite into an RFC 4180 file", async () => {
    const store = openStore(":memory:");
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-csv-")), "x.csv");
    const rows = inBatches(
      () =>
        sqliteOf(store)
          .prepare("SELECT value AS v FROM json_each(?)")
          .iterate(JSON.stringify(["plain", "a,b", 'say "hi"', "two\nlines", "=1+1"])) as IterableIterator<{
          v: string;
        }>,
    );
    const count = await writeCsv(path, [{ header: "v", value: (r) => r.v }], rows, { bom: false });
    expect(count).toBe(5);
    expect(readFileSync(path, "utf8")).toBe(
      'v\r\nplain\r\n"a,b"\r\n"say ""hi"""\r\n"two\nlines"\r\n\'=1+1\r\n',
    );
    store.close();
  });

  it("fails cleanly when the file cannot be written, leaving the connection usable", async () => {
    const store = openStore(":memory:");
    const rows = inBatches(
      () =>
        sqliteOf(store).prepare("SELECT value FROM json_each('[1,2,3]')").iterate() as IterableIterator<{
          value: number;
        }>,
    );
    await expect(
      writeCsv("/nonexistent-dir/x.csv", [{ header: "value", value: (r) => r.value }], rows, { bom: true }),
    ).rejects.toThrow(/ENOENT/);
    expect(sqliteOf(store).prepare("SELECT 42").pluck().get()).toBe(42);
    store.close();
  });
});

describe("csvRecord", () => {
  it("writes the bytes csv-stringify writes with the report's options (which it replaced)", () => {
    const cells = [
      "",
      "plain",
      "a,b",
      'say "hi"',
      '"',
      '""',
      "two\nlines",
      "cr\ronly",
      "crlf\r\nend",
      ",",
      " lead",
      "tab\tin",
      "ünïcödé ✓",
      "'=1+1",
      "\\back",
      0,
      -1,
      1.5,
      1_700_000_000_123,
      null,
    ];
    const rows = cells.flatMap((a) => cells.map((b) => [a, b, "x"]));
    const expected = stringify(rows, {
      record_delimiter: "\r\n",
      quoted_match: /[\r\n]/,
      cast: { number: (n) => String(n) },
    });
    expect(rows.map((r) => csvRecord(r)).join("")).toBe(expected);
  });
});
