// The report's PostgreSQL variants (src/store/pg/reportQueries.ts) return the rows of the one text they
// stand in for, in the same order: each is only another plan for the same question. The scenario's
// history, copied into PostgreSQL, asked with and without an action-type filter.
import { describe, expect, it } from "vitest";
import { resolvePeriod } from "../../src/report/period.ts";
import { reportParamsFor } from "../../src/report/serverDays.ts";
import { toPositional } from "../../src/store/pg/namedParams.ts";
import { PG_CHANGES_CSV, PG_VARIANTS } from "../../src/store/pg/reportQueries.ts";
import { CHANGES_CSV_SQL } from "../../src/store/reportQueries/changesCsv.ts";
import {
  bindParams,
  paramsFor,
  QUERIES,
  type ReportParams,
  type ReportQueryName,
} from "../../src/store/reportQueries.ts";
import { SCENARIO, scenarioOnDisk } from "../report/scenario.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";
import { copyStore } from "./copyStore.ts";

function run(url: string, sql: string, params: ReportParams) {
  const { text, values } = toPositional(sql, paramsFor(sql, bindParams(params)));
  return queryOnce(url, text, values);
}

describe("the report's PostgreSQL variants", () => {
  it("return the one text's rows, in its order", async () => {
    const { dbPath } = scenarioOnDisk("flagtrail-pg-variants-", { ruleDiffs: true });
    const url = await freshDatabase("variants");
    await copyStore(dbPath, url);
    const period = resolvePeriod(SCENARIO.from, SCENARIO.to, SCENARIO.timeZone);
    const serverDays = {
      first: { day: SCENARIO.from, offsetMinutes: 0, dayStart: period.start, dayEnd: period.start },
      last: { day: SCENARIO.to, offsetMinutes: 0, dayStart: period.end, dayEnd: period.end },
    };
    const filters = [null, ["experiment_start", "gate_update", "config_review_reject"]];
    let rows = 0;
    const variants: [string, string, string][] = [
      ...(Object.keys(PG_VARIANTS) as ReportQueryName[]).map((name): [string, string, string] => [
        name,
        QUERIES[name],
        PG_VARIANTS[name]!,
      ]),
      // The three change CSVs' one read (ReportSnapshot.changes).
      ["changes", CHANGES_CSV_SQL, PG_CHANGES_CSV],
    ];
    for (const [name, one, variant] of variants) {
      for (const types of filters) {
        const params = reportParamsFor(period, types, serverDays);
        const expected = await run(url, one, params);
        expect(await run(url, variant, params), `${name}, types ${types}`).toEqual(expected);
        rows += expected.length;
      }
    }
    // The scenario has rows for them to agree on.
    expect(rows).toBeGreaterThan(20);
    expect(Object.keys(PG_VARIANTS)).toEqual(expect.arrayContaining(["rejected", "reviewRecords"]));
  });
});
