// Issue 25: a report reads the period's rows once where several sections need them. The per-entity
// tables of experiment state changes and config edits are folded from their CSVs' rows, which their
// summary queries would group again; the Markdown must be the same bytes either way.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ReportFormat } from "../../src/report/formats.ts";
import { resolvePeriod } from "../../src/report/period.ts";
import { writeCsvs } from "../../src/report/reportCsvs.ts";
import { type ReportArgs, readPart } from "../../src/report/reportParts.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import type { Store } from "../../src/store/open.ts";
import { CHANGES_CSV_SQL } from "../../src/store/reportQueries/changesCsv.ts";
import { QUERIES, readReportSnapshot } from "../../src/store/reportQueries.ts";
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
    // The three change CSVs from one read: their rows are not read again per CSV.
    expect(withCsv.prepared).toContain(CHANGES_CSV_SQL);
    for (const csv of [QUERIES.experimentStateChangesCsv, QUERIES.configEditsCsv, QUERIES.unreviewedCsv])
      expect(withCsv.prepared).not.toContain(csv);
    // The scenario has rule changes to count, and both documents say the same.
    expect(withCsv.markdown).toMatch(/\| Config \| Changes \| Rule changes \|/);
    expect(withCsv.markdown).toBe(alone.markdown);
  });

  it("writes the three change CSVs from one read, the bytes and counts of their three queries", async () => {
    const argsOf = (actionTypes: string[] | null): ReportArgs => ({
      period: resolvePeriod(SCENARIO.from, SCENARIO.to, SCENARIO.timeZone),
      formats: new Set(["csv"]),
      actionTypes,
      generatedAt: new Date(GENERATED_AT).toISOString(),
      bom: true,
      controls: null,
    });
    /** The CSVs of one project, or of two (each with the first column `project`), and the counts. */
    async function csvs(oneRead: boolean, projects: string[], args: ReportArgs) {
      const dir = mkdtempSync(join(tmpdir(), "flagtrail-one-read-"));
      const counts = await readReportSnapshot(store, async (snapshot) => {
        // Without `changes` the report runs the three CSV queries, as on PostgreSQL.
        const { changes: _, ...threeQueries } = snapshot;
        const parts = [];
        for (const project of projects)
          parts.push(await readPart({ project, snapshot: oneRead ? snapshot : threeQueries }, args));
        const files = await writeCsvs(parts, dir, args);
        return { files, counts: parts.map((p) => p.counts) };
      });
      const bytes = Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), "utf8")]));
      return { bytes, ...counts };
    }
    const cases = [
      [["default"], null],
      [["default", "second"], null],
      [["default"], ["experiment_start", "gate_update", "config_review_accept"]],
    ] as const;
    for (const [projects, types] of cases) {
      const args = argsOf(types ? [...types] : null);
      const one = await csvs(true, [...projects], args);
      const three = await csvs(false, [...projects], args);
      expect(Object.keys(one.bytes)).toHaveLength(3);
      expect(one).toEqual(three);
      // Every CSV has rows to agree on.
      for (const file of one.files) expect(file.rows, `${file.name}, types ${types}`).toBeGreaterThan(0);
    }
  });
});
