// The report's reads ahead on PostgreSQL (ReportSnapshot.ahead, src/store/pg/reportSnapshot.ts): run on a
// second session that imports the report's snapshot, so they return what the report's own session reads
// (a change committed after the snapshot was taken is in neither), each sent once; the second session
// ends with the snapshot.
import { describe, expect, it } from "vitest";
import { SLOW_READS } from "../../src/report/compliance.ts";
import { resolvePeriod } from "../../src/report/period.ts";
import { reportParamsFor } from "../../src/report/serverDays.ts";
import { openPgStore } from "../../src/store/pg/open.ts";
import { type ReportSnapshot, readReportSnapshot } from "../../src/store/reportQueries.ts";
import { SCENARIO, scenarioOnDisk } from "../report/scenario.ts";
import { freshDatabase, queryOnce, recordStatements } from "./cluster.ts";
import { copyStore } from "./copyStore.ts";

const inTransaction = (url: string) =>
  queryOnce<{ n: number }>(
    url,
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
  );

describe("the report's reads ahead on PostgreSQL", () => {
  it("come from a second session in the report's snapshot, each sent once", async () => {
    const { dbPath } = scenarioOnDisk("flagtrail-pg-ahead-", { ruleDiffs: true });
    const url = await freshDatabase("ahead");
    await copyStore(dbPath, url);
    const store = await openPgStore(url);
    try {
      const period = resolvePeriod(SCENARIO.from, SCENARIO.to, SCENARIO.timeZone);
      const params = reportParamsFor(period, null, null);
      const readAll = async (snapshot: ReportSnapshot) => {
        const rows: unknown[] = [];
        for (const name of SLOW_READS) rows.push(await snapshot.rows(name, params));
        return rows;
      };
      const before = await readReportSnapshot(store, readAll);
      const recorded = recordStatements();
      let ahead: unknown[];
      try {
        ahead = await readReportSnapshot(store, async (snapshot) => {
          // The snapshot is taken by its first read; the change below is committed after it.
          await snapshot.storedRecords();
          await queryOnce(url, "UPDATE action_type_categories SET category = 'other'");
          await snapshot.ahead!(SLOW_READS, params);
          return await readAll(snapshot);
        });
      } finally {
        recorded.stop();
      }
      expect(ahead).toEqual(before);
      // A snapshot of its own would have seen the change.
      expect(await readReportSnapshot(store, readAll)).not.toEqual(before);
      expect(recorded.statements.filter((s) => s.startsWith("SET TRANSACTION SNAPSHOT"))).toHaveLength(1);
      // Each read once (the by-type counts' text is the first with this head).
      const byType = recorded.statements.filter((s) => s.includes("coalesce(c.category, 'uncategorised')"));
      expect(byType).toHaveLength(1);
      expect(recorded.statements.filter((s) => s.startsWith("WITH days AS"))).toHaveLength(1);
      // Both sessions ended: none left inside a transaction.
      expect(await inTransaction(url)).toEqual([{ n: 0 }]);
    } finally {
      await store.close();
    }
  });
});
