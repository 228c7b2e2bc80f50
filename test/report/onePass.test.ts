// Issue 25: a report reads the period's rows once where several sections need them. The per-entity
// tables of experiment state changes and config edits are folded from their CSVs' rows, which their
// summary queries would group again; the Markdown must be the same bytes either way.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ReportFormat } from "../../src/report/formats.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import type { Store } from "../../src/store/open.ts";
import { QUERIES } from "../../src/store/reportQueries.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

let store: Store;
beforeEach(() => {
  store = buildScenarioStore(":memory:", { ruleDiffs: true });
});
afterEach(() => store.close());

/** Writes the scenario's report in `formats`; returns its Markdown and every SQL text it prepared. */
async function report(formats: ReportFormat[]): Promise<{ markdown: string; prepared: string[] }> {
  const sqlite = sqliteOf(store);
  const prepare = vi.spyOn(sqlite, "prepare");
  try {
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-one-pass-"));
    await writeReports({ store, ...SCENARIO, outDir, formats, generatedAt: GENERATED_AT });
    const name = readdirSync(outDir).find((f) => f.startsWith("compliance_") && f.endsWith(".md"))!;
    return {
      markdown: readFileSync(join(outDir, name), "utf8"),
      prepared: prepare.mock.calls.map((call) => call[0]),
    };
  } finally {
    prepare.mockRestore();
  }
}

describe("a report's passes over the period", () => {
  it("folds the per-experiment and per-config tables from the CSVs' rows, to the summary queries' bytes", async () => {
    const withCsv = await report(["csv", "md"]);
    const alone = await report(["md"]);
    // Without CSVs the summary queries run; with them, they do not (their rows are the CSVs').
    expect(alone.prepared).toContain(QUERIES.experimentSummary);
    expect(alone.prepared).toContain(QUERIES.configSummary);
    expect(withCsv.prepared).not.toContain(QUERIES.experimentSummary);
    expect(withCsv.prepared).not.toContain(QUERIES.configSummary);
    expect(withCsv.prepared).toContain(QUERIES.configEditsCsv);
    // The scenario has rule changes to count, and both documents say the same.
    expect(withCsv.markdown).toMatch(/\| Config \| Changes \| Rule changes \|/);
    expect(withCsv.markdown).toBe(alone.markdown);
  });
});
