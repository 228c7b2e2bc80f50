// A long finding list (issue 9): up to FINDINGS_LISTED_IN_FULL changes without an approved review are
// listed one by one; more are summarised per entity, the executive summary says so, and every one of
// them is a row of the unreviewed-changes CSV (full rows, byte-order mark, columns in the manifest).
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FINDINGS_LISTED_IN_FULL } from "../../src/report/sections/reviews.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { openStore } from "../../src/store/open.ts";
import { insertSyncedRecords, makeRecord, markdownSection } from "./fixtures.ts";

const HEADING = "Changes with no approved review before them";
const COLUMNS = [
  "time",
  "epoch_ms",
  "record_id",
  "updated_by",
  "updated_by_user_id",
  "updated_by_email",
  "entity_name",
  "action_type",
  "change_log",
  "rule_diff_summary",
];

/** `count` unreviewed gate edits over three gates in June 2024, plus one reviewed edit. */
async function juneReport(count: number) {
  const records = Array.from({ length: count }, (_, i) =>
    makeRecord({
      at: Date.UTC(2024, 5, 1 + (i % 29), 9, i % 60),
      name: `gate_${i % 3}`,
      actionType: "gate_update",
      changeLog: `edit ${i}`,
      updatedBy: i % 2 === 0 ? "Zoë" : "李雷",
    }),
  );
  // Approved just before: reviewed, in neither the list nor the CSV.
  records.push(
    makeRecord({ at: Date.UTC(2024, 5, 30, 10), name: "reviewed_gate", actionType: "config_review_accept" }),
    makeRecord({ at: Date.UTC(2024, 5, 30, 11), name: "reviewed_gate", actionType: "gate_update" }),
  );
  const store = openStore(":memory:");
  const outDir = mkdtempSync(join(tmpdir(), "flagtrail-long-findings-"));
  try {
    insertSyncedRecords(store, records);
    const result = await writeReports({
      store,
      from: "2024-06-01",
      to: "2024-06-30",
      outDir,
      formats: ["csv", "md", "html"],
      generatedAt: 0,
    });
    const read = (kind: string) =>
      readFileSync(join(outDir, kind.replace(".", "_2024-06-01_2024-06-30.")), "utf8");
    return {
      result,
      md: read("compliance.md"),
      html: read("compliance.html"),
      manifest: JSON.parse(read("manifest.json")),
      csv: read("unreviewed-changes.csv"),
    };
  } finally {
    store.close();
  }
}

function tableLines(section: string): string[] {
  return section
    .split("\n")
    .filter((l) => l.startsWith("| "))
    .slice(2);
}

describe("changes without an approved review", () => {
  it(`are listed one by one up to ${FINDINGS_LISTED_IN_FULL}, and are a CSV of their own`, async () => {
    const { md, csv, result, manifest } = await juneReport(FINDINGS_LISTED_IN_FULL);
    expect(md).toContain(`| Changes without an approved review | [${FINDINGS_LISTED_IN_FULL}](#`);
    expect(md).not.toContain("summarised per entity; every one in");
    expect(tableLines(markdownSection(md, HEADING))).toHaveLength(FINDINGS_LISTED_IN_FULL);
    expect(result.counts.unreviewedChanges).toBe(FINDINGS_LISTED_IN_FULL);
    const lines = csv.split("\r\n");
    expect(lines[0]).toBe(`\uFEFF${COLUMNS.join(",")}`);
    expect(lines.filter((l) => l.startsWith("2024-"))).toHaveLength(FINDINGS_LISTED_IN_FULL);
    expect(csv).not.toContain("reviewed_gate");
    const listed = manifest.files.find((f: { name: string }) => f.name.startsWith("unreviewed-changes_"));
    expect(listed).toMatchObject({ rows: FINDINGS_LISTED_IN_FULL, columns: COLUMNS });
  });

  it("past that bound are summarised per entity, the summary says so, and the CSV holds every one", async () => {
    const count = FINDINGS_LISTED_IN_FULL + 1;
    const { md, html, csv, manifest } = await juneReport(count);
    const summary = md.slice(0, md.indexOf("## Completeness"));
    expect(summary).toContain(
      `| Changes without an approved review | [${count}](#changes-with-no-approved-review-before-them) ` +
        "(summarised per entity; every one in the unreviewed-changes CSV) |",
    );
    expect(summary).toContain(
      `except the changes without an approved review: more than ${FINDINGS_LISTED_IN_FULL}`,
    );
    const section = markdownSection(md, HEADING);
    expect(section).toContain(
      `${count} changes, more than ${FINDINGS_LISTED_IN_FULL}: summarised per entity`,
    );
    const rows = tableLines(section);
    expect(rows.map((r) => r.split(" | ").slice(0, 2).join(" | "))).toEqual([
      "| gate\\_0 | 67",
      "| gate\\_1 | 67",
      "| gate\\_2 | 67",
    ]);
    expect(rows[0]).toContain("gate\\_update (67)");
    // The HTML rendition follows the Markdown.
    expect(html).toContain(`${count} changes, more than ${FINDINGS_LISTED_IN_FULL}: summarised per entity`);
    expect(html).toContain("(summarised per entity; every one in the unreviewed-changes CSV)");
    // Every change, with its change log, is in the CSV: nothing is lost from the evidence package.
    const data = csv.split("\r\n").filter((l) => l.startsWith("2024-"));
    expect(data).toHaveLength(count);
    for (let i = 0; i < count; i++) expect(csv).toContain(`,edit ${i},`);
    expect(csv).toContain("Zoë");
    expect(csv).toContain("李雷");
    expect(manifest.files.find((f: { name: string }) => f.name.startsWith("unreviewed-changes_")).rows).toBe(
      count,
    );
  });
});

describe("the per-entity table of unreviewed changes", () => {
  it("is the same whether folded from the CSV's rows or read by its query (no CSV asked for)", async () => {
    // Names whose UTF-16 order differs from the stores' byte order (U+FF5E sorts before U+1F600 in
    // UTF-16, after it in UTF-8), people unknown and known, several action types per entity.
    const names = ["gate_\u{1F600}", "gate_\uFF5E", "gate_a", "Gate_b", "gate_é"];
    const records = Array.from({ length: FINDINGS_LISTED_IN_FULL + 40 }, (_, i) =>
      makeRecord({
        at: Date.UTC(2024, 5, 1 + (i % 29), 9, i % 60),
        name: names[i % names.length]!,
        actionType: i % 3 === 0 ? "gate_update" : "config_conditions_update",
        changeLog: `edit ${i}`,
        updatedBy: i % 4 === 0 ? null : `person ${i % 7}`,
      }),
    );
    const store = openStore(":memory:");
    try {
      insertSyncedRecords(store, records);
      const md = async (formats: ("csv" | "md")[]) => {
        const outDir = mkdtempSync(join(tmpdir(), "flagtrail-unreviewed-fold-"));
        await writeReports({ store, from: "2024-06-01", to: "2024-06-30", outDir, formats, generatedAt: 0 });
        return readFileSync(join(outDir, "compliance_2024-06-01_2024-06-30.md"), "utf8");
      };
      const folded = await md(["csv", "md"]);
      const queried = await md(["md"]);
      const section = markdownSection(folded, HEADING);
      expect(section).toContain("summarised per entity");
      expect(tableLines(section).map((r) => r.split(" | ")[0])).toEqual([
        "| Gate\\_b",
        "| gate\\_a",
        "| gate\\_é",
        "| gate\\_\uFF5E",
        "| gate\\_\u{1F600}",
      ]);
      expect(folded).toBe(queried);
    } finally {
      store.close();
    }
  });
});
