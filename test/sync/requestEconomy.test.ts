// Request economy against the real simulator over loopback: what a backfill and a nightly run cost in
// requests, and that a gap is found by halving down to its day. Counts come from the simulator itself.
import { afterEach, describe, expect, it } from "vitest";
import { createConsoleClient } from "../../src/api/consoleClient.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { addDays } from "../../src/sync/days.ts";
import { runSync } from "../../src/sync/runSync.ts";
import { startTestSimulator, tempDbPath } from "../helpers/simSync.ts";

const NOW = Date.UTC(2026, 10, 20, 20, 0, 0); // 12:00 in Los Angeles
const DAY = 86_400_000;
const TODAY = "2026-11-20";

let sim: RunningSimulator | undefined;
let store: Store | undefined;
afterEach(async () => {
  store?.close();
  await sim?.close();
  sim = undefined;
  store = undefined;
});

const auditRequests = (s: RunningSimulator) =>
  s.control.counters().requests["GET /console/v1/audit_logs"] ?? 0;
const clientFor = (s: RunningSimulator) =>
  createConsoleClient({
    baseUrl: s.url,
    apiKey: s.settings.apiKey,
    authHeader: s.settings.authHeader,
    rateLimits: [{ limit: 100_000, windowMs: 1000 }],
  });
const storedCount = (s: Store) =>
  sqliteOf(s).prepare("SELECT count(*) FROM audit_logs").pluck().get() as number;

describe("request economy", () => {
  it("a three-year backfill costs its pages and no coverage request; a nightly run ceil(k/100) + 1", async () => {
    sim = await startTestSimulator({ records: 3000, days: 1000, now: NOW });
    store = openStore(tempDbPath());
    const client = clientFor(sim);
    try {
      const since = addDays(TODAY, -1002);
      // Audit requests only: the entity reads that follow are counted in test/integration/sync-entities.test.ts.
      const backfill = await runSync(store, client, { since, now: () => NOW, entities: false });
      expect(storedCount(store)).toBe(sim.control.size());
      // One request learns the page size; each window is then read in pages of what was granted, and its
      // totalItems proves each of its days complete: no count request at all.
      expect(backfill.pageSize).toBe(1000);
      expect(backfill.coverageRequests).toBe(0);
      expect(backfill.coverageGaps).toEqual([]);
      expect(backfill.requests).toBe(1 + backfill.windows);
      expect(auditRequests(sim)).toBe(backfill.requests);

      // Nightly: 250 new records; pages of 100 as the bar is written for them.
      sim.control.resetCounters();
      const later = NOW + DAY;
      sim.control.advanceClock(DAY);
      sim.control.append(
        Array.from({ length: 250 }, (_, i) => ({
          at: later - 3_600_000 + i * 1000,
          name: `n${i}`,
          actionType: "gate_update",
        })),
      );
      const nightly = await runSync(store, client, { pageSize: 100, now: () => later, entities: false });
      expect(nightly.inserted).toBe(250);
      expect(auditRequests(sim)).toBeLessThanOrEqual(Math.ceil(250 / 100) + 2);
      expect(nightly.requests).toBe(Math.ceil(250 / 100) + 1); // 3 pages + 1 count over the history
      expect(nightly.coverageGaps).toEqual([]);
      expect(storedCount(store)).toBe(sim.control.size());
    } finally {
      await client.close();
    }
  });

  it("finds a late record by halving down to its day, reads only that day, and stores it", async () => {
    sim = await startTestSimulator({ records: 800, days: 200, now: NOW });
    store = openStore(tempDbPath());
    const client = clientFor(sim);
    try {
      await runSync(store, client, { since: addDays(TODAY, -202), now: () => NOW });
      const lateAt = NOW - 37 * DAY; // well before the nightly's lookback days
      const [late] = sim.control.append([{ at: lateAt, name: "late_gate", actionType: "gate_update" }]);
      sim.control.resetCounters();
      const nightly = await runSync(store, client, { now: () => NOW + 60_000 });
      const stored = sqliteOf(store)
        .prepare("SELECT server_day FROM audit_logs WHERE id = ?")
        .pluck()
        .get(late!.id);
      expect(stored).toBeDefined();
      const lateDay = stored as string;
      const dayReads = sim.control
        .counters()
        .lastQueries.filter((q) => !q.includes("limit=1&") && !q.endsWith("limit=1"))
        .filter((q) => q.includes(`startDate=${lateDay}`) && q.includes(`endDate=${lateDay}`));
      expect(dayReads.length).toBeGreaterThanOrEqual(1);
      // Halving a ~200-day history: about log2(200) count requests, not one per day.
      expect(nightly.coverageRequests).toBeLessThanOrEqual(12);
      expect(nightly.coverageGaps).toEqual([]);
      expect(storedCount(store)).toBe(sim.control.size());
    } finally {
      await client.close();
    }
  });
});
