// How a report's rows flow (issue 25): through memory that does not grow with the period.
import { describe, expect, it } from "vitest";
import { sqliteOf } from "../../src/store/connection.ts";
import { readReportSnapshot } from "../../src/store/reportQueries.ts";
import { buildScenarioStore } from "./scenario.ts";

describe("a report's memory", () => {
  it("reads SQLite through the connection's own page cache, not one sized for the period's rows", async () => {
    const store = buildScenarioStore(":memory:");
    try {
      const sqlite = sqliteOf(store);
      sqlite.pragma("cache_size = -2000");
      // A 64 MiB cache filled with the period's pages: peak RSS grew with the month (~60 MB on a 1M store).
      const during = await readReportSnapshot(store, async () =>
        sqlite.pragma("cache_size", { simple: true }),
      );
      expect(during).toBe(-2000);
      expect(sqlite.pragma("cache_size", { simple: true })).toBe(-2000);
    } finally {
      store.close();
    }
  });
});
