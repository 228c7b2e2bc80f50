// Issue 25: a report reads the period's rows once where several sections need them. The per-entity
// tables of experiment state changes and config edits are folded from their CSVs' rows, which their
// summary queries would group again; the Markdown must be the same bytes either way.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Control } from "../../src/controls/config.ts";
import type { ReportFormat } from "../../src/report/formats.ts";
import { resolvePeriod } from "../../src/report/period.ts";
import { type ReportArgs, readPart } from "../../src/report/reportParts.ts";
import { REVIEW_WINDOW_MS } from "../../src/report/reviews.ts";
import { reportParamsFor } from "../../src/report/serverDays.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import type { Store } from "../../src/store/open.ts";
import { CHANGES_CSV_SQL } from "../../src/store/reportQueries/changesCsv.ts";
import { QUERIES, readReportSnapshot } from "../../src/store/reportQueries.ts";
import { insertRecords, makeRecord } from "./fixtures.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

let store: Store;
beforeEach(() => {
  store = buildScenarioStore(":memory:", { ruleDiffs: true });
});
afterEach(() => store.close());

async function all<Row>(rows: AsyncIterable<readonly Row[]>): Promise<Row[]> {
  const out: Row[] = [];
  for await (const batch of rows) out.push(...batch);
  return out;
}

/** Writes the scenario's report in `formats`; returns its Markdown and every SQL text it prepared. */
async function report(
  formats: ReportFormat[],
  controls: Control[] | null = null,
): Promise<{ markdown: string; prepared: string[] }> {
  const sqlite = sqliteOf(store);
  const prepare = vi.spyOn(sqlite, "prepare");
  try {
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-one-pass-"));
    await writeReports({ store, ...SCENARIO, outDir, formats, controls, generatedAt: GENERATED_AT });
    const name = readdirSync(outDir).find((f) => f.startsWith("compliance_") && f.endsWith(".md"));
    return {
      markdown: name === undefined ? "" : readFileSync(join(outDir, name), "utf8"),
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

  it("reads the coverage rows once, for the notice, the completeness section and the controls", async () => {
    // Each read recounts every record of the period's server days (~0.4 s on a 300k-record store).
    const controls: Control[] = [{ id: "complete", kind: "completeness", severity: "high" }];
    const reads = (prepared: string[]) => prepared.filter((sql) => sql === QUERIES.coverage).length;
    for (const formats of [["csv"], ["md"], ["csv", "md", "html"]] satisfies ReportFormat[][]) {
      expect(reads((await report(formats)).prepared), `${formats}`).toBe(1);
      expect(reads((await report(formats, controls)).prepared), `${formats} controls`).toBe(1);
    }
    // The rows read once still make the verdict and the control's finding: 2024-03-31's gap (7 vs 5).
    const { markdown } = await report(["md"], controls);
    expect(markdown).toContain("server days not reconciled: 2024-03-28 (no coverage data), 2024-03-31 (gap)");
    expect(markdown).toMatch(/#+ complete: 3 findings\n/);
  });

  it("reads the three change CSVs' rows in one pass: the rows of their three queries, in their order", async () => {
    const argsOf = (actionTypes: string[] | null): ReportArgs => ({
      period: resolvePeriod(SCENARIO.from, SCENARIO.to, SCENARIO.timeZone),
      formats: new Set(["csv"]),
      actionTypes,
      generatedAt: new Date(GENERATED_AT).toISOString(),
      bom: true,
      controls: null,
    });
    for (const types of [null, ["experiment_start", "gate_update", "config_review_accept"]]) {
      await readReportSnapshot(store, async (snapshot) => {
        const p = (await readPart({ project: "default", snapshot }, argsOf(types))).params;
        const changes = await all(snapshot.changes(p));
        const strip = (rows: typeof changes) =>
          rows.map(({ category: _c, unreviewed: _u, rule_changes, ...row }) => ({ ...row, rule_changes }));
        const experiments = await all(snapshot.batches("experimentStateChangesCsv", p));
        const configs = await all(snapshot.batches("configEditsCsv", p));
        const unreviewed = await all(snapshot.batches("unreviewedCsv", p));
        for (const rows of [experiments, configs, unreviewed])
          expect(rows.length, `types ${types}`).toBeGreaterThan(0);
        const ofCategory = (category: string) => changes.filter((c) => c.category === category);
        expect(strip(ofCategory("experiment_state_change"))).toEqual(
          experiments.map((row) => ({ ...row, rule_changes: 0 })),
        );
        expect(strip(ofCategory("config_edit"))).toEqual(configs);
        expect(
          changes
            .filter((c) => c.unreviewed === 1)
            .map(({ category: _c, unreviewed: _u, rule_changes: _r, ...row }) => row),
        ).toEqual(unreviewed);
      });
    }
  });

  it("judges a change reviewed as the unreviewed changes' one text does, at the review window's edges", async () => {
    // The one-pass read spells the review window its own way (src/store/reportQueries/changesCsv.ts):
    // ties within a second, the window's last instant, exempt records between, the other kind's approval.
    const period = resolvePeriod(SCENARIO.from, SCENARIO.to, SCENARIO.timeZone);
    const at = (hours: number) => period.start + hours * 3_600_000;
    const accept = (name: string, ms: number, kind = "config") =>
      makeRecord({ at: ms, name, actionType: `${kind}_review_accept` });
    const edit = (name: string, ms: number, actionType = "gate_update") =>
      makeRecord({ at: ms, name, actionType });
    insertRecords(store, [
      edit("tie_reviewed", at(1)),
      accept("tie_reviewed", at(1)),
      accept("tie_second", at(2)),
      edit("tie_second", at(2)),
      edit("tie_second", at(2)),
      accept("window_edge", at(3) - REVIEW_WINDOW_MS),
      edit("window_edge", at(3)),
      accept("window_past", at(4) - REVIEW_WINDOW_MS - 1_000),
      edit("window_past", at(4)),
      accept("exempt_between", at(5)),
      edit("exempt_between", at(5) + 1_000, "gate_create"),
      edit("exempt_between", at(5) + 2_000),
      accept("other_kind", at(6), "experiment"),
      edit("other_kind", at(6) + 1_000),
      accept("before_period", period.start - 1_000),
      edit("before_period", at(7)),
    ]);
    const names = [
      "tie_reviewed",
      "tie_second",
      "window_edge",
      "window_past",
      "exempt_between",
      "other_kind",
    ];
    const edges = new Set([...names, "before_period"]);
    for (const types of [null, ["gate_update", "gate_create"]]) {
      const params = reportParamsFor(period, types, null);
      await readReportSnapshot(store, async (snapshot) => {
        const unreviewed = (await all(snapshot.changes(params)))
          .filter((c) => c.unreviewed === 1)
          .map(({ category: _c, unreviewed: _u, rule_changes: _r, ...row }) => row);
        expect(unreviewed, `types ${types}`).toEqual(await all(snapshot.batches("unreviewedCsv", params)));
        const flagged = unreviewed.filter((row) => edges.has(row.name)).map((row) => row.name);
        expect(flagged, `types ${types}`).toEqual(["tie_second", "window_past", "other_kind"]);
      });
    }
  });
});
