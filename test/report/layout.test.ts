// The compliance Markdown's layout (issue 9): an executive summary whose counts link to their sections,
// findings in full, descriptive lists summarised per entity, a chart legible at a month and a quarter,
// and names that never become live links.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chartBuckets } from "../../src/report/sections/daily.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import type { Store } from "../../src/store/open.ts";
import { juneComplianceMarkdown, makeRecord } from "./fixtures.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

/** A heading's anchor as GitHub derives it: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The rows of the first table after `heading`, header and separator excluded. */
function tableRows(md: string, heading: string): string[] {
  const start = md.indexOf(`${heading}\n`);
  expect(start, heading).toBeGreaterThan(-1);
  const lines = md.slice(start, md.indexOf("<details>", start)).split("\n");
  return lines.filter((l) => l.startsWith("| ")).slice(2);
}

describe("the executive summary", () => {
  let store: Store;
  let md: string;
  beforeAll(async () => {
    store = buildScenarioStore(":memory:", { ruleDiffs: true });
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-layout-"));
    await writeReports({ store, ...SCENARIO, outDir, formats: ["md"], generatedAt: GENERATED_AT });
    md = readFileSync(
      join(outDir, `compliance_${SCENARIO.from}_${SCENARIO.to}_${SCENARIO.timeZone.replaceAll("/", "-")}.md`),
      "utf8",
    );
  });
  afterAll(() => store.close());

  it("comes first, with the period, zone, records, entities, people and the completeness verdict", () => {
    const headings = md.split("\n").filter((l) => l.startsWith("## "));
    expect(headings[0]).toBe("## Summary");
    expect(md).toContain("| Period | 2024-03-29 to 2024-04-01, both days included, in Europe/Berlin |");
    expect(md).toContain("| Records | 12 |\n| Entities | 6 |\n| People | 3 |");
    expect(md).toContain(
      "| Completeness | **Not complete**: 3 of 5 server days not reconciled: 2024-03-28 (no coverage data), " +
        "2024-03-31 (gap), 2024-04-01 (no coverage data). [Details](#completeness) |",
    );
  });

  it("links each finding's count to a heading that lists exactly that many rows", () => {
    const anchors = new Map(
      md
        .split("\n")
        .filter((l) => /^#{2,3} /.test(l))
        .map((l) => [slug(l.replace(/^#+ /, "")), l] as const),
    );
    const links = [...md.matchAll(/\[(\d+|Details)\]\(#([^)]+)\)/g)];
    expect(links).toHaveLength(5);
    for (const [, , anchor] of links) expect(anchors.has(anchor!), anchor).toBe(true);
    const count = (anchor: string) => Number(links.find((l) => l[2] === anchor)![1]);
    for (const anchor of [
      "changes-with-no-approved-review-before-them",
      "reviews-approved-by-their-own-author",
      "rejected-reviews",
      "records-mutated-under-the-same-id",
    ]) {
      expect(tableRows(md, anchors.get(anchor)!), anchor).toHaveLength(count(anchor));
    }
    expect(count("changes-with-no-approved-review-before-them")).toBe(4);
  });

  it("says so in its first lines when the period has no coverage data at all", async () => {
    const june = await juneComplianceMarkdown([
      makeRecord({ at: Date.UTC(2024, 5, 3, 9), name: "exp", actionType: "experiment_start" }),
    ]);
    const summary = june.slice(0, june.indexOf("## Completeness"));
    expect(summary).toContain(
      "| Completeness | **Not checked**: none of the 30 server days 2024-06-01 to 2024-06-30 has coverage data",
    );
  });
});

describe("descriptive lists", () => {
  it("are one row per entity however many changes it has, with counts, first and last, and people", async () => {
    const records = Array.from({ length: 300 }, (_, i) =>
      makeRecord({
        at: Date.UTC(2024, 5, 1 + (i % 29), 9, i % 60),
        name: i % 2 === 0 ? "alpha_gate" : "beta_exp",
        actionType: i % 2 === 0 ? "gate_update" : i % 4 === 1 ? "experiment_start" : "experiment_abandon",
        updatedBy: i % 3 === 0 ? "Ann" : "Ben",
      }),
    );
    const md = await juneComplianceMarkdown(records);
    expect(tableRows(md, "## Experiment state changes per experiment")).toEqual([
      "| beta\\_exp | 150 | 2024-06-01T09:21:00+00:00 | 2024-06-29T09:57:00+00:00 | " +
        "experiment\\_abandon (75), experiment\\_start (75) | Ben (100), Ann (50) |",
    ]);
    expect(tableRows(md, "## Config edits per config")).toHaveLength(1);
    expect(tableRows(md, "## Config edits per config")[0]).toMatch(/^\| alpha\\_gate \| 150 \| 0 \|/);
    // No review in this history: 300 unreviewed changes, more than are listed in full, so they are
    // summarised per entity too (test/report/longFindings.test.ts checks the bound and the CSV).
    expect(
      tableRows(md, "### Changes with no approved review before them").map((r) => r.split(" | ")[0]),
    ).toEqual(["| alpha\\_gate", "| beta\\_exp"]);
  });
});

describe("the activity chart", () => {
  const days = (from: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      day: new Date(Date.parse(`${from}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10),
      records: i + 1,
    }));

  it("draws a bar per day for a month", () => {
    const buckets = chartBuckets(days("2024-10-01", 31));
    expect(buckets).toHaveLength(31);
    expect(buckets[30]).toEqual({ from: "2024-10-31", to: "2024-10-31", records: 31 });
  });

  it("draws a bar per week from Monday for a quarter, keeping every record", () => {
    const quarter = days("2024-10-01", 92); // a Tuesday to Tuesday 31 December
    const buckets = chartBuckets(quarter);
    expect(buckets).toHaveLength(14);
    expect(buckets[0]).toEqual({ from: "2024-10-01", to: "2024-10-06", records: 1 + 2 + 3 + 4 + 5 + 6 });
    expect(buckets[1]!.from).toBe("2024-10-07");
    expect(buckets.at(-1)).toEqual({ from: "2024-12-30", to: "2024-12-31", records: 91 + 92 });
    expect(buckets.reduce((s, b) => s + b.records, 0)).toBe((92 * 93) / 2);
  });

  it("labels the axis MM-DD in the Markdown", async () => {
    const md = await juneComplianceMarkdown([
      makeRecord({ at: Date.UTC(2024, 5, 3, 9), name: "exp", actionType: "experiment_start" }),
    ]);
    // 30 bars: MM-DD on every 7th, the day of the month between (31 MM-DD labels overlapped).
    expect(md).toContain('    x-axis ["06-01", "2", "3", "4", "5", "6", "7", "06-08", "9", ');
    expect(md).toContain('"06-29", "30"]');
    expect(md).toContain('    title "Records per day, 2024"');
  });
});

describe("names in the Markdown", () => {
  // GFM autolinks `scheme:` URLs (at the `:`), `www.` and `local@domain` in text; CommonMark only
  // `<…>`. An escaped `:`, `@`, `<` or `.` after www is a separate character to the parser.
  const HOSTILE = [
    '=HYPERLINK("http://x.example/a?b=c","y")',
    "see https://evil.example/login",
    "www.example.com",
    "mailto:boss@example.com",
    "ops@example.com",
    "<https://angle.example>",
  ];

  it("render as text: no autolink can start anywhere in them", async () => {
    const md = await juneComplianceMarkdown(
      HOSTILE.map((name, i) =>
        makeRecord({
          at: Date.UTC(2024, 5, 3, 9, i),
          name,
          actionType: "gate_update",
          updatedBy: name,
          modifierEmail: name,
          updatedByUserID: `user${i}`,
        }),
      ),
    );
    const prose = md.replace(/```[\s\S]*?```/g, "");
    expect(prose).not.toMatch(/https?:|mailto:|(?<!\\)@|www\.|(?<!\\)<https?/i);
    expect(prose).toContain('| =HYPERLINK("http\\://x.example/a?b=c","y") |');
    expect(prose).toContain("mailto\\:boss\\@example.com");
    expect(prose).toContain("ops\\@example.com");
    expect(prose).toContain("www\\.example.com");
  });
});
