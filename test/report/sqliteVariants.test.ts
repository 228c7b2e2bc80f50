// The report's SQLite variants (src/store/reportQueries/sqliteVariants.ts) return the rows of the one
// text they stand in for, in the same order: each is only another plan for the same question. The
// scenario's history plus records an index-based count could miss (an action type with no category,
// records just outside the period, no user id, one user id under two names, several records of one
// entity), asked with and without an action-type filter, and over a period with no records.
import { describe, expect, it } from "vitest";
import { resolvePeriod } from "../../src/report/period.ts";
import { reportParamsFor } from "../../src/report/serverDays.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { SQLITE_VARIANTS } from "../../src/store/reportQueries/sqliteVariants.ts";
import {
  bindParams,
  paramsFor,
  QUERIES,
  type ReportParams,
  type ReportQueryName,
  readReportSnapshot,
} from "../../src/store/reportQueries.ts";
import { insertRecords, makeRecord } from "./fixtures.ts";
import { buildScenarioStore, SCENARIO } from "./scenario.ts";

describe("the report's SQLite variants", () => {
  it("return the one text's rows, in its order, and the snapshot runs them", async () => {
    const store = buildScenarioStore();
    const period = resolvePeriod(SCENARIO.from, SCENARIO.to, SCENARIO.timeZone);
    insertRecords(store, [
      makeRecord({ at: period.start, actionType: "brand_new_action", name: "first_instant" }),
      makeRecord({ at: period.start - 1, actionType: "brand_new_action", name: "just_before" }),
      makeRecord({ at: period.end - 1, actionType: "gate_update", name: "last_instant" }),
      makeRecord({ at: period.end, actionType: "gate_update", name: "just_after" }),
      makeRecord({ at: period.start + 5_000, actionType: "gate_update", name: "last_instant" }),
      makeRecord({
        at: period.start + 9_000,
        actionType: "gate_update",
        name: "no_user_id",
        updatedByUserID: null,
      }),
      // One user id under two names (its row shows the greater), and a second person with no user id.
      makeRecord({
        at: period.start + 12_000,
        actionType: "gate_update",
        name: "renamed",
        updatedBy: "Jane Renamed",
      }),
      makeRecord({
        at: period.start + 13_000,
        actionType: "experiment_start",
        name: "no_user_id",
        updatedBy: "Zed",
        updatedByUserID: null,
      }),
    ]);
    const sqlite = sqliteOf(store);
    const run = (sql: string, params: ReportParams) =>
      sqlite.prepare(sql).all(paramsFor(sql, bindParams(params)));
    const empty = resolvePeriod("2031-01-01", "2031-01-03", "UTC");
    const asked = [
      [period, null],
      [period, ["gate_update", "brand_new_action", "not_in_the_store"]],
      [period, ["experiment_start"]],
      [empty, null],
    ] as const;
    const names = Object.keys(SQLITE_VARIANTS) as ReportQueryName[];
    expect(names).toEqual(expect.arrayContaining(["byActionType", "entityCount", "byPerson"]));
    let rows = 0;
    for (const name of names) {
      for (const [range, types] of asked) {
        const params = reportParamsFor(range, types, null);
        const expected = run(QUERIES[name], params);
        expect(run(SQLITE_VARIANTS[name]!, params), `${name}, types ${types}`).toEqual(expected);
        // The report's snapshot runs the variant and hands over the same rows.
        const read = await readReportSnapshot(store, (snapshot) => snapshot.rows(name, params));
        expect(read).toEqual(expected);
        rows += expected.length;
      }
    }
    // The history has rows for them to agree on: the uncategorised type among them.
    expect(rows).toBeGreaterThan(10);
    const byType = run(QUERIES.byActionType, reportParamsFor(period, null, null));
    expect(byType).toContainEqual({ action_type: "brand_new_action", category: "uncategorised", records: 1 });
    store.close();
  });
});
