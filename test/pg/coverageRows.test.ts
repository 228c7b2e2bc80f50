// A backfill's coverage checks hundreds of days at once: their rows go in a statement per 500 days, not
// one per day (each a round trip on PostgreSQL), with the same rows as before: every day's values, a day
// listed twice keeping its last values.
import { afterEach, describe, expect, it } from "vitest";
import { type CoverageDay, openStore, recordCoverage, type Store } from "../../src/store/syncStore.ts";
import { addDays } from "../../src/sync/days.ts";
import { freshDatabase, queryOnce, recordStatements } from "./cluster.ts";

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const days = (n: number): CoverageDay[] =>
  Array.from({ length: n }, (_, i) => ({
    day: addDays("2023-01-01", i),
    serverTotal: i,
    localCount: i,
    quarantinedCount: i % 3,
    dayClosed: i % 2 === 0,
  }));

describe("coverage rows on PostgreSQL", () => {
  it("go in a statement per 500 days, a day listed twice keeping its last values", async () => {
    const url = await freshDatabase("coverage_rows");
    store = await openStore(url);
    const written = days(700);
    const again = { ...written[5]!, serverTotal: 99, localCount: 98 };
    const { statements, stop } = recordStatements();
    try {
      await recordCoverage(store, "f", [...written, again], 1, 1_000);
    } finally {
      stop();
    }
    expect(statements.filter((text) => /^INSERT INTO coverage/.test(text))).toHaveLength(2);
    const rows = await queryOnce<{ day: string; server_total: number; local_count: number }>(
      url,
      "SELECT day, server_total, local_count, quarantined_count, day_closed, checked_at FROM coverage ORDER BY day",
    );
    expect(rows).toHaveLength(700);
    expect(rows[5]).toMatchObject({ day: "2023-01-06", server_total: 99, local_count: 98 });
    expect(rows[699]).toMatchObject({
      day: addDays("2023-01-01", 699),
      server_total: 699,
      local_count: 699,
      quarantined_count: 0,
      day_closed: 0,
      checked_at: "1000",
    });
  });
});
