// `flagtrail sql`'s text table: any row count (issue 13 item 4), and control characters written
// visibly instead of reaching the terminal (item 6). CSV and JSON keep the data as it is.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TABLE_SAMPLE_ROWS } from "../../src/sql/format.ts";
import { runSql, type SqlFormat } from "../../src/sql/runSql.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { escapeControls } from "../../src/text/escape.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { createRecordWriter } from "../helpers/storeFixtures.ts";
import { makeRecord } from "../report/fixtures.ts";

const HOSTILE_NAME = "\u001b[31mred\u0007bell\bback\u0000nul\u009b2J\u007fdel\u202eevil\\path";
const HOSTILE_SHOWN = "\\u001b[31mred\\u0007bell\\u0008back\\u0000nul\\u009b2J\\u007fdel\\u202eevil\\\\path";

let dbPath: string;
let store: Store;

beforeAll(async () => {
  dbPath = join(mkdtempSync(join(tmpdir(), "flagtrail-sql-table-")), "store.db");
  const writable = openStore(dbPath);
  // Through the sync's own writer, as a record from the service would arrive.
  const record = makeRecord({
    id: "H000000000000000000001",
    at: Date.UTC(2024, 2, 30, 12),
    actionType: "gate_update",
    name: HOSTILE_NAME,
  });
  await createRecordWriter(writable).writePage([record], { syncRunId: null });
  writable.close();
  store = openStore(dbPath, { readonly: true });
});
afterAll(() => store.close());

async function capture(
  query: string,
  format: SqlFormat,
  tty = false,
): Promise<{ text: string; rows: number }> {
  const out = Object.assign(new PassThrough(), { isTTY: tty });
  const chunks: Buffer[] = [];
  out.on("data", (chunk: Buffer) => chunks.push(chunk));
  const rows = await runSql(store, query, format, out);
  return { text: Buffer.concat(chunks).toString("utf8"), rows };
}

describe("escapeControls", () => {
  it("writes C0, C1, DEL, bidi controls and the backslash visibly, and leaves other text alone", () => {
    expect(escapeControls(HOSTILE_NAME)).toBe(HOSTILE_SHOWN);
    expect(escapeControls("a\r\nb\tc")).toBe("a\\r\\nb\\tc");
    expect(escapeControls("Zoë – 東京 ✓")).toBe("Zoë – 東京 ✓");
    expect(escapeControls("line\nbreak\u001b", { keep: "\n" })).toBe("line\nbreak\\u001b");
    // Nothing a terminal acts on is left.
    expect(escapeControls(HOSTILE_NAME)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});

describe("flagtrail sql table output", () => {
  it("prints 200,000 rows (WITH RECURSIVE) without holding them, a late wide cell whole", async () => {
    const query = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
      SELECT i, CASE WHEN i = 150000 THEN 'a much longer label than any before' ELSE 'row ' || i END AS label
      FROM n`;
    const { text, rows } = await capture(query, "table");
    expect(rows).toBe(200_000);
    const lines = text.split("\n");
    // header, rule, 200,000 rows, count, and the final newline's empty string
    expect(lines).toHaveLength(200_004);
    // Widths from the first TABLE_SAMPLE_ROWS rows: "1000" and "row 1000".
    expect(lines[0]).toBe("i    | label");
    expect(lines[1]).toBe("-----+---------");
    expect(lines[2]).toBe("1    | row 1");
    expect(lines[TABLE_SAMPLE_ROWS + 2]).toBe("1001 | row 1001");
    expect(lines[150_001]).toBe("150000 | a much longer label than any before");
    expect(lines[200_001]).toBe("200000 | row 200000");
    expect(lines[200_002]).toBe("(200000 rows)");
  });

  it("escapes control characters in a record's name through the real CLI; CSV and JSON keep them", async () => {
    const query = "SELECT id, name FROM audit_logs";
    const table = await runCli(["sql", query, "--db", dbPath]);
    expect(table.stderr).toBe("");
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(`H000000000000000000001 | ${HOSTILE_SHOWN}\n`);
    expect(table.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);

    const json = await runCliInProcess(["sql", query, "--db", dbPath, "--format", "json"]);
    expect(JSON.parse(json.stdout)).toEqual([{ id: "H000000000000000000001", name: HOSTILE_NAME }]);
    const csv = await capture(query, "csv");
    expect(csv.text).toBe(`id,name\r\nH000000000000000000001,${HOSTILE_NAME}\r\n`);
  });

  it("escapes DEL, C1 and bidi controls in JSON and NDJSON written to a terminal; the value is unchanged", async () => {
    const query = "SELECT id, name FROM audit_logs";
    for (const format of ["json", "nl"] as const) {
      const { text } = await capture(query, format, true);
      expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(text).toContain("\\u009b2J\\u007fdel\\u202eevil");
      const parsed = format === "json" ? JSON.parse(text) : [JSON.parse(text)];
      expect(parsed).toEqual([{ id: "H000000000000000000001", name: HOSTILE_NAME }]);
      // Not a terminal: the raw characters, as before.
      expect((await capture(query, format)).text).toContain("\u009b2J\u007fdel\u202eevil");
    }
  });
});
