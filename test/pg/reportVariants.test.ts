// The report's PostgreSQL variants (src/store/pg/reportQueries.ts) return the rows of the one text they
// stand in for, in the same order: each is only another plan for the same question. The scenario's
// history, copied into PostgreSQL, asked with and without an action-type filter. The change CSVs' read
// (PG_CHANGES_CSV, its unreviewed flags from PG_UNREVIEWED_IDS on a second session) through the snapshot.
import { describe, expect, it } from "vitest";
import { resolvePeriod } from "../../src/report/period.ts";
import { reportParamsFor } from "../../src/report/serverDays.ts";
import { toPositional } from "../../src/store/pg/namedParams.ts";
import { openPgStore } from "../../src/store/pg/open.ts";
import { PG_VARIANTS } from "../../src/store/pg/reportQueries.ts";
import { CHANGES_CSV_SQL } from "../../src/store/reportQueries/changesCsv.ts";
import {
  bindParams,
  paramsFor,
  QUERIES,
  type ReportParams,
  type ReportQueryName,
  readReportSnapshot,
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
    for (const name of Object.keys(PG_VARIANTS) as ReportQueryName[]) {
      for (const types of filters) {
        const params = reportParamsFor(period, types, serverDays);
        const expected = await run(url, QUERIES[name], params);
        expect(await run(url, PG_VARIANTS[name]!, params), `${name}, types ${types}`).toEqual(expected);
        rows += expected.length;
      }
    }
    // The three change CSVs' one read (ReportSnapshot.changes), some of its rows unreviewed.
    const store = await openPgStore(url);
    try {
      for (const types of filters) {
        const params = reportParamsFor(period, types, serverDays);
        // queryOnce leaves bigint and count(*) as text; the store's sessions read them as numbers.
        const expected = (await run(url, CHANGES_CSV_SQL, params)).map((row) => {
          const { occurred_at, rule_changes } = row as Record<string, string>;
          return {
            ...(row as { unreviewed: number }),
            occurred_at: Number(occurred_at),
            rule_changes: Number(rule_changes),
          };
        });
        const changes = await readReportSnapshot(store, async (snapshot) => {
          const all: unknown[] = [];
          for await (const batch of snapshot.changes(params)) all.push(...batch);
          return all;
        });
        expect(changes, `changes, types ${types}`).toEqual(expected);
        expect(expected.filter((row) => row.unreviewed === 1).length).toBeGreaterThan(0);
        rows += expected.length;
      }
    } finally {
      await store.close();
    }
    // The scenario has rows for them to agree on.
    expect(rows).toBeGreaterThan(20);
    expect(Object.keys(PG_VARIANTS)).toEqual(expect.arrayContaining(["rejected", "reviewRecords"]));
  });
});
