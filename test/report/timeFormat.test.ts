// Every time in a report's CSVs, Markdown and HTML has one format: ISO 8601 to the second with the
// report zone's offset. Before, a waiver's time was written `…T10:00:00.123Z` beside `+02:00` times, the
// generation time `.000Z`, and a clock time kept its milliseconds unless they were .000 (two widths in
// one column).
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseControlsConfig } from "../../src/controls/config.ts";
import { nextWaiverRow } from "../../src/controls/waivers.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { appendWaiver } from "../../src/store/controls/waivers.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

/** Anything that looks like an ISO date-time, with whatever fraction and zone follow it. */
const ANY_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?/g;
const THE_FORMAT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/;
const WAIVED = "rr:S000000000000000000005";

async function reportWithWaiver() {
  const store = buildScenarioStore(":memory:", { ruleDiffs: true });
  const outDir = mkdtempSync(join(tmpdir(), "flagtrail-time-format-"));
  try {
    await appendWaiver(store, (previous) =>
      nextWaiverRow(previous, {
        finding_id: WAIVED,
        action: "waive",
        reason: "hotfix INC-42",
        by_name: "Dana Lee",
        expires: null,
        created_at: Date.UTC(2024, 3, 1, 10, 0, 0, 123),
      }),
    );
    const { controls } = parseControlsConfig(
      JSON.stringify({ controls: [{ id: "rr", kind: "review-required", severity: "high" }] }),
      "test.json",
    );
    const result = await writeReports({
      store,
      ...SCENARIO,
      outDir,
      formats: ["csv", "md", "html"],
      controls,
      generatedAt: GENERATED_AT + 456,
    });
    return result.files.map((f) => ({ name: f.name, text: readFileSync(f.path, "utf8") }));
  } finally {
    store.close();
  }
}

describe("times in a report", () => {
  it("have one format in every CSV, Markdown and HTML file", async () => {
    const files = await reportWithWaiver();
    expect(files.map((f) => f.name.split("_")[0]).sort()).toEqual([
      "compliance",
      "compliance",
      "config-edits",
      "experiment-state-changes",
      "findings",
      "unreviewed-changes",
    ]);
    for (const { name, text } of files) {
      const times = [...text.matchAll(ANY_TIME)].map((m) => m[0]);
      expect(times.length, name).toBeGreaterThan(0);
      expect(
        times.filter((t) => !THE_FORMAT.test(t)),
        name,
      ).toEqual([]);
    }
    // The findings CSV: the waiver's time as the finding's, in the report's zone, to the second.
    const findings = files.find((f) => f.name.startsWith("findings_"))!.text.split("\r\n");
    const header = findings[0]!.replace(/^\uFEFF/, "").split(",");
    const row = findings.find((l) => l.startsWith(`${WAIVED},`))!.split(",");
    expect(row[header.indexOf("time")]).toBe("2024-03-29T12:00:00+01:00");
    expect(row[header.indexOf("waived_at")]).toBe("2024-04-01T12:00:00+02:00");
    const md = files.find((f) => f.name.endsWith(".md"))!.text;
    expect(md).toContain("Dana Lee: hotfix INC-42 (2024-04-01T12:00:00+02:00)");
    expect(md).toContain("| Generated at | 2024-04-02T08:00:00+02:00 (1712037600456) |");
  });
});
