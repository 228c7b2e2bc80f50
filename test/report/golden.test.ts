// Golden files: the report's bytes for a fixed store and a fixed clock. Regenerate deliberately with
// UPDATE_GOLDEN=1 npx vitest run test/report/golden.test.ts, then review the diff.

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReportResult, writeReports } from "../../src/report/writeReports.ts";
import { runSql } from "../../src/sql/runSql.ts";
import type { Store } from "../../src/store/open.ts";
import { printedQueries } from "../helpers/printedQueries.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

const GOLDEN_DIR = new URL("./golden/", import.meta.url);
const SIGNING_KEY = "test-signing-key-never-written";
let store: Store;
let result: ReportResult;
let outDir: string;

beforeAll(async () => {
  store = buildScenarioStore(":memory:", { ruleDiffs: true });
  outDir = mkdtempSync(join(tmpdir(), "flagtrail-report-"));
  result = await writeReports({
    store,
    ...SCENARIO,
    outDir,
    generatedAt: GENERATED_AT,
    signingKey: SIGNING_KEY,
  });
});
afterAll(() => store.close());

function output(name: string): string {
  return readFileSync(join(outDir, name), "utf8");
}

function golden(goldenName: string, actual: string): void {
  const path = new URL(goldenName, GOLDEN_DIR);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(path, actual);
  expect(actual).toBe(readFileSync(path, "utf8"));
}

describe("report golden files", () => {
  it("experiment state changes CSV", () => {
    golden(
      "experiment-state-changes.golden.csv",
      output("experiment-state-changes_2024-03-29_2024-04-01_Europe-Berlin.csv"),
    );
  });
  it("config edits CSV", () => {
    golden("config-edits.golden.csv", output("config-edits_2024-03-29_2024-04-01_Europe-Berlin.csv"));
  });
  it("changes with no approved review CSV", () => {
    golden(
      "unreviewed-changes.golden.csv",
      output("unreviewed-changes_2024-03-29_2024-04-01_Europe-Berlin.csv"),
    );
  });
  it("compliance Markdown", () => {
    golden("compliance.golden.md", output("compliance_2024-03-29_2024-04-01_Europe-Berlin.md"));
  });
  it("manifest", () => {
    golden("manifest.golden.json", output("manifest_2024-03-29_2024-04-01_Europe-Berlin.json"));
  });
});

/** RFC 4180 records → cells (quoted cells may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      record.push(cell);
      cell = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      record.push(cell);
      records.push(record);
      record = [];
      cell = "";
      i++;
    } else cell += ch;
  }
  return records;
}

/** Splits a Markdown table row on the pipes that are not backslash-escaped. */
function cells(line: string): string[] {
  return line
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

describe("report contents", () => {
  it("counts what it wrote", () => {
    expect(result.counts).toEqual({
      experimentStateChanges: 4,
      configEdits: 5,
      unreviewedChanges: 4,
      records: 12,
    });
    expect(result.files.map((f) => [f.name, f.rows])).toEqual([
      ["experiment-state-changes_2024-03-29_2024-04-01_Europe-Berlin.csv", 4],
      ["config-edits_2024-03-29_2024-04-01_Europe-Berlin.csv", 5],
      ["unreviewed-changes_2024-03-29_2024-04-01_Europe-Berlin.csv", 4],
      ["compliance_2024-03-29_2024-04-01_Europe-Berlin.md", 12],
    ]);
    expect(result.signed).toBe(true);
  });

  it("neutralises formula cells and keeps RFC 4180 quoting in the CSV", () => {
    const csv = output("config-edits_2024-03-29_2024-04-01_Europe-Berlin.csv");
    const lines = csv.split("\r\n");
    // The UTF-8 byte-order mark first: spreadsheets then read the file as UTF-8.
    expect(lines[0]).toBe(
      "\uFEFFtime,epoch_ms,record_id,updated_by,updated_by_user_id,updated_by_email,entity_name,action_type,change_log,rule_diff_summary",
    );
    // Mallory's name, email and the change log all start with formula characters.
    expect(csv).toContain("'=cmd|' /C calc'!A0,malloryUserId0000003,'@mallory@example.com,");
    expect(csv).toContain(`'+1 default <b>bold</b>`);
    // A newline inside a name is quoted, not a record break.
    expect(csv).toContain('"pricing `config` | v2\nsecond line"');
    // Every parsed cell, quoted or not: none starts with a formula character.
    for (const file of [
      "config-edits_2024-03-29_2024-04-01_Europe-Berlin.csv",
      "experiment-state-changes_2024-03-29_2024-04-01_Europe-Berlin.csv",
    ]) {
      const cells = parseCsv(output(file)).flat();
      expect(cells.length).toBeGreaterThan(20);
      expect(cells.filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([]);
    }
    expect(csv.endsWith("\r\n")).toBe(true);
  });

  it("writes times in the chosen zone with offset, across the DST change", () => {
    const csv = output("experiment-state-changes_2024-03-29_2024-04-01_Europe-Berlin.csv");
    expect(csv).toContain("2024-03-29T10:30:00+01:00,1711704600000,S000000000000000000004");
    expect(csv).toContain("2024-04-01T09:00:00+02:00,1711954800000,S000000000000000000012");
    // The 22:30 UTC record of 1 April is on 2 April in Berlin: not in the period.
    expect(output("config-edits_2024-03-29_2024-04-01_Europe-Berlin.csv")).not.toContain("late_gate");
    // 22:30 UTC on 30 March is still 30 March in Berlin (23:30 CET).
    expect(output("config-edits_2024-03-29_2024-04-01_Europe-Berlin.csv")).toContain(
      "2024-03-30T23:30:00+01:00",
    );
  });

  it("keeps every Markdown table row as wide as its header despite | in names", () => {
    const md = output("compliance_2024-03-29_2024-04-01_Europe-Berlin.md");
    expect(md).toContain("pricing \\`config\\` \\| v2<br>second line");
    const lines = md.split("\n");
    let width: number | null = null;
    let tables = 0;
    for (const line of lines) {
      if (!line.startsWith("|")) {
        width = null;
        continue;
      }
      if (width === null) {
        width = cells(line).length;
        tables += 1;
      } else expect(cells(line), line).toHaveLength(width);
    }
    expect(tables).toBeGreaterThan(8);
    expect(md).not.toContain("<b>");
  });

  it("reports completeness, reviews, self-approval, rejection and mutation", () => {
    const md = output("compliance_2024-03-29_2024-04-01_Europe-Berlin.md");
    expect(md).toContain("The period overlaps the 5 server days 2024-03-28 to 2024-04-01.");
    expect(md).toContain("exists for 3 of these 5 server days. On 2 of them the local count equals");
    expect(md).toContain("| 2024-03-31 | all | 7 | 5 | -2 | 5 |");
    expect(md).toContain("Server days with no coverage data at all (2): 2024-03-28, 2024-04-01.");
    const section = (title: string) =>
      md.slice(md.indexOf(title), md.indexOf("<details>", md.indexOf(title)));
    const unreviewed = section("### Changes with no approved review before them");
    expect(unreviewed).toContain("test\\_gate\\_1");
    // signup_flow's only approval is older than the review window.
    expect(unreviewed).toContain("signup\\_flow");
    // checkout_flow's approval of 28 March covers its next change (the start; creating is exempt), not
    // the decision of 1 April; pricing_v2's conditions came right after an approval.
    expect(unreviewed).not.toContain("experiment\\_start");
    expect(unreviewed).toContain("| checkout\\_flow | experiment\\_decision\\_make |");
    expect(unreviewed).not.toContain("pricing\\_v2");
    expect(section("### Reviews approved by their own author")).toContain(
      "| pricing\\_v2 | config\\_review\\_accept |",
    );
    expect(section("### Rejected reviews")).toContain("Needs a power analysis");
    expect(section("## Records mutated under the same id")).toContain(
      "| S000000000000000000013 | Sales dashboard |",
    );
    expect(section("## Records mutated under the same id")).toContain("\\~changeLog");
    expect(md).toContain("bar [3, 1, 5, 3]");
  });

  it("never writes the signing key", () => {
    for (const file of [...result.files.map((f) => f.path), result.manifestPath]) {
      expect(readFileSync(file, "utf8")).not.toContain(SIGNING_KEY);
    }
  });
});

describe("queries printed in the report", () => {
  it("each runs with `flagtrail sql`'s parameter codec on the store it describes", async () => {
    const md = output("compliance_2024-03-29_2024-04-01_Europe-Berlin.md");
    const blocks = printedQueries(md);
    expect(blocks.length).toBeGreaterThan(10);
    const results = new Map<string, Record<string, unknown>[]>();
    for (const { sql: sqlite, params } of blocks) {
      const sink = new PassThrough();
      const chunks: Buffer[] = [];
      sink.on("data", (c: Buffer) => chunks.push(c));
      await runSql(store, sqlite, "json", sink, params);
      results.set(sqlite, JSON.parse(Buffer.concat(chunks).toString("utf8")));
    }
    const rejected = [...results.entries()].find(([sql]) => sql.includes("json_each(@rejects)"))!;
    expect(JSON.stringify(rejected[1])).toContain("Needs a power analysis");
    const unreviewed = [...results.entries()].find(([sql]) => sql.startsWith("WITH events AS"))!;
    expect(unreviewed[1].map((r) => r.id)).toContain("S000000000000000000012");
  });
});
