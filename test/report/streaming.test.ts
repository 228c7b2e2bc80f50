// How a report's rows flow (issue 25): through memory that does not grow with the period.
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { sqliteOf } from "../../src/store/connection.ts";
import { cursorBatches } from "../../src/store/pg/reportSnapshot.ts";
import { BATCH_ROWS, readReportSnapshot } from "../../src/store/reportQueries.ts";
import { buildScenarioStore } from "./scenario.ts";

describe("a report's memory", () => {
  it("reads SQLite through a 2 MB page cache, not better-sqlite3's 16 MB, and gives the connection its own back", async () => {
    const store = buildScenarioStore(":memory:");
    try {
      const sqlite = sqliteOf(store);
      // What better-sqlite3 builds SQLite with, and so what a read-only connection has: filled by a
      // one-month 1M-record report, ~17 MB of its peak RSS.
      sqlite.pragma("cache_size = -16000");
      const during = await readReportSnapshot(store, async () =>
        sqlite.pragma("cache_size", { simple: true }),
      );
      expect(during).toBe(-2000);
      expect(sqlite.pragma("cache_size", { simple: true })).toBe(-16000);
      // A smaller one is left as it is.
      sqlite.pragma("cache_size = -500");
      expect(await readReportSnapshot(store, async () => sqlite.pragma("cache_size", { simple: true }))).toBe(
        -500,
      );
    } finally {
      store.close();
    }
  });
});

describe("a PostgreSQL report's cursor", () => {
  /** A connection that answers DECLARE, FETCH and CLOSE, logging each request and when it is answered. */
  function fakeClient(total: number, log: string[]) {
    let sent = 0;
    return {
      query: async (text: string) => {
        const kind = text.split(" ")[0]!;
        log.push(`send ${kind}`);
        await new Promise((resolve) => setImmediate(resolve));
        if (kind !== "FETCH") return { rows: [] };
        const rows = Array.from({ length: Math.min(BATCH_ROWS, total - sent) }, (_, i) => ({ n: sent + i }));
        sent += rows.length;
        return { rows };
      },
    } as unknown as pg.ClientBase;
  }

  it("asks for the next batch before handing over this one, and reads every row once", async () => {
    const log: string[] = [];
    const total = BATCH_ROWS * 2 + 7;
    const seen: number[] = [];
    for await (const batch of cursorBatches<{ n: number }>(fakeClient(total, log), "SELECT 1", [])) {
      log.push(`batch of ${batch.length}`);
      seen.push(...batch.map((r) => r.n));
    }
    expect(seen).toEqual(Array.from({ length: total }, (_, i) => i));
    // The server works on the next batch while the report writes this one.
    expect(log).toEqual([
      "send DECLARE",
      "send FETCH",
      "send FETCH",
      `batch of ${BATCH_ROWS}`,
      "send FETCH",
      `batch of ${BATCH_ROWS}`,
      "batch of 7",
      "send CLOSE",
    ]);
  });

  it("closes the cursor after the FETCH under way when the reader stops early", async () => {
    const log: string[] = [];
    for await (const _ of cursorBatches(fakeClient(BATCH_ROWS * 3, log), "SELECT 1", [])) break;
    expect(log).toEqual(["send DECLARE", "send FETCH", "send FETCH", "send CLOSE"]);
  });
});
