// The report's reads ahead on PostgreSQL (ReportSnapshot.ahead, src/store/pg/reportSnapshot.ts): run
// through cursors on a second session that imports the report's snapshot, so they return what the
// report's own session reads (a change committed after the snapshot was taken is in neither), each sent
// once; the second session ends with the snapshot.
import { describe, expect, it, vi } from "vitest";
import { SLOW_READS } from "../../src/report/compliance.ts";
import { resolvePeriod } from "../../src/report/period.ts";
import { reportParamsFor } from "../../src/report/serverDays.ts";
import { toPositional } from "../../src/store/pg/namedParams.ts";
import { openPgStore } from "../../src/store/pg/open.ts";
import { PG_VARIANTS } from "../../src/store/pg/reportQueries.ts";
import {
  bindParams,
  paramsFor,
  QUERIES,
  type ReportSnapshot,
  readReportSnapshot,
} from "../../src/store/reportQueries.ts";
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
        for (const name of SLOW_READS) {
          if (name !== "reviewRecords") rows.push(await snapshot.rows(name, params));
          else {
            const all: unknown[] = [];
            for await (const batch of snapshot.batches(name, params)) all.push(...batch);
            rows.push(all);
          }
        }
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
      // Neither session JIT-compiles the report's queries (a server with JIT spent more than it saved).
      expect(recorded.statements.filter((s) => /^SET LOCAL jit = off$/m.test(s))).toHaveLength(2);
      // Each read once, through a cursor of the second session.
      for (const name of SLOW_READS) {
        const sql = PG_VARIANTS[name] ?? QUERIES[name];
        const { text } = toPositional(sql, paramsFor(sql, bindParams(params)));
        const sent = recorded.statements.filter((s) => s.includes(text));
        expect(sent, name).toHaveLength(1);
        expect(sent[0], name).toMatch(/^DECLARE flagtrail_report_\d+ NO SCROLL CURSOR FOR /);
      }
      // Both sessions ended: none left inside a transaction.
      expect(await inTransaction(url)).toEqual([{ n: 0 }]);
      // A read that fails ahead fails again on the report's session, which reports it; both sessions end.
      const bad = { ...params, days: [{ day: "2024-03-29", start: "never" as unknown as number, end: 0 }] };
      await expect(
        readReportSnapshot(store, async (snapshot) => {
          await snapshot.ahead!(["daily"], bad);
          return await snapshot.rows("daily", bad);
        }),
      ).rejects.toThrow(/bigint/);
      expect(await inTransaction(url)).toEqual([{ n: 0 }]);
      expect(await readReportSnapshot(store, readAll)).not.toEqual(before);
    } finally {
      await store.close();
    }
  });
  it("give up on a lock queued behind the report's own (an ALTER waiting): the report's session reads it, nothing hangs", async () => {
    const { dbPath } = scenarioOnDisk("flagtrail-pg-ahead-lock-", { ruleDiffs: true });
    const url = await freshDatabase("aheadlock");
    await copyStore(dbPath, url);
    const store = await openPgStore(url);
    const params = reportParamsFor(resolvePeriod(SCENARIO.from, SCENARIO.to, SCENARIO.timeZone), null, null);
    const changes = async (snapshot: ReportSnapshot) => {
      const rows: unknown[] = [];
      for await (const batch of snapshot.changes!(params)) rows.push(...batch);
      return rows;
    };
    let alter: Promise<unknown> | undefined;
    try {
      const before = await readReportSnapshot(store, changes);
      expect(before.some((row) => (row as { unreviewed: number }).unreviewed === 1)).toBe(true);
      const during = await readReportSnapshot(store, async (snapshot) => {
        await snapshot.storedRecords(); // the report's session now holds its lock on audit_logs
        alter = queryOnce(url, "ALTER TABLE audit_logs ADD COLUMN probe integer");
        await vi.waitFor(
          async () => {
            const [waiting] = await queryOnce<{ n: number }>(
              url,
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
               AND wait_event_type = 'Lock' AND query LIKE 'ALTER TABLE audit_logs%'`,
            );
            expect(waiting?.n).toBe(1);
          },
          { timeout: 60_000, interval: 20 },
        );
        // The second session's read of the unreviewed ids queues behind the ALTER, which waits for this.
        return await changes(snapshot);
      });
      expect(during).toEqual(before);
      await alter;
    } finally {
      await alter?.catch(() => undefined);
      await store.close();
    }
  });
  it("wait for the change CSVs' first batch, which the report waits for, before they start", async () => {
    const { dbPath } = scenarioOnDisk("flagtrail-pg-ahead-gate-", { ruleDiffs: true });
    const url = await freshDatabase("aheadgate");
    await copyStore(dbPath, url);
    const store = await openPgStore(url);
    const period = resolvePeriod(SCENARIO.from, SCENARIO.to, SCENARIO.timeZone);
    const params = reportParamsFor(period, null, null);
    const texts = SLOW_READS.map((name) => {
      const sql = PG_VARIANTS[name] ?? QUERIES[name];
      return toPositional(sql, paramsFor(sql, bindParams(params))).text;
    });
    const recorded = recordStatements();
    const sentAhead = () => recorded.statements.filter((s) => texts.some((text) => s.includes(text)));
    try {
      await readReportSnapshot(store, async (snapshot) => {
        await snapshot.ahead!(SLOW_READS, params);
        // The second session is ready, its settings its last statement, and sends nothing more.
        await vi.waitFor(
          async () => {
            const [ready] = await queryOnce<{ n: number }>(
              url,
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
               AND state = 'idle in transaction' AND query LIKE 'SET LOCAL cursor_tuple_fraction%'`,
            );
            expect(ready?.n).toBe(1);
          },
          { timeout: 60_000, interval: 20 },
        );
        expect(sentAhead()).toEqual([]);
        for await (const batch of snapshot.changes!(params)) {
          expect(batch.length).toBeGreaterThan(0);
          break;
        }
        expect((await snapshot.rows("byActionType", params)).length).toBeGreaterThan(0);
      });
    } finally {
      recorded.stop();
      await store.close();
    }
    const firstFetch = recorded.statements.findIndex((s) => s.startsWith("FETCH"));
    const firstAhead = recorded.statements.indexOf(sentAhead()[0]!);
    expect(firstFetch).toBeGreaterThan(-1);
    expect(firstAhead).toBeGreaterThan(firstFetch);
  });
});
