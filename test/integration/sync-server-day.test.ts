// Coverage against the simulator in the server's zone (America/Los_Angeles): a day is final only once
// it has ended there, and days found open are checked again by the next run.

import { afterEach, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { createSyncClient } from "../../src/sync/client.ts";
import { runSync } from "../../src/sync/runSync.ts";
import { startTestSimulator } from "../helpers/simSync.ts";

const HOUR = 3_600_000;
// 02:00 UTC on 2026-11-22 is 18:00 on 2026-11-21 in Los Angeles (PST, UTC-8).
const SIM_NOW = Date.UTC(2026, 10, 22, 2, 0, 0);

let sim: RunningSimulator | undefined;
let store: Store | undefined;
afterEach(async () => {
  store?.close();
  store = undefined;
  await sim?.close();
  sim = undefined;
});

function coverageRows(s: Store) {
  return sqliteOf(s)
    .prepare("SELECT day, server_total, local_count, day_closed FROM coverage ORDER BY day")
    .all() as { day: string; server_total: number; local_count: number; day_closed: number }[];
}

describe("coverage in the server's zone", () => {
  it("does not call the server's today (or tomorrow) complete, and re-checks open days next run", async () => {
    sim = await startTestSimulator({ records: 300, days: 20, now: SIM_NOW, timeZone: "America/Los_Angeles" });
    store = openStore(":memory:");
    const client = createSyncClient(
      { baseUrl: sim.url, apiKey: sim.settings.apiKey, authHeader: sim.settings.authHeader },
      { rateLimits: [{ limit: 100_000, windowMs: 1000 }] },
    );
    try {
      const first = await runSync(store, client, { since: "2026-11-18", now: () => SIM_NOW });
      expect(first.outcome).toBe("ok");
      const byDay = new Map(coverageRows(store).map((r) => [r.day, r]));
      expect(byDay.get("2026-11-20")?.day_closed).toBe(1); // ended at 08:00 UTC on the 21st
      expect(byDay.get("2026-11-21")?.day_closed).toBe(0); // LA's today, 18:00 there
      expect(byDay.get("2026-11-22")?.day_closed).toBe(0); // LA's tomorrow
      expect(byDay.get("2026-11-21")?.server_total).toBeGreaterThan(0);
      expect(first.coverageOpenDays).toEqual(expect.arrayContaining(["2026-11-21", "2026-11-22"]));
      expect(first.coverageOpenDays).not.toContain("2026-11-20");

      // Later, records arrive on the 21st (LA) and the run reads an unrelated explicit range: the
      // open days are checked again all the same, and the 21st is now over (09:30 UTC = 01:30 LA).
      const later = SIM_NOW + 7.5 * HOUR;
      const arrived = sim.control.append([
        { at: SIM_NOW + 5 * HOUR, name: "late_gate", actionType: "gate_update" },
      ]);
      expect(arrived).toHaveLength(1);
      const second = await runSync(store, client, {
        since: "2026-11-18",
        until: "2026-11-18",
        now: () => later,
      });
      const after = new Map(coverageRows(store).map((r) => [r.day, r]));
      expect(after.get("2026-11-21")?.day_closed).toBe(1);
      expect(after.get("2026-11-22")?.day_closed).toBe(0);
      expect(second.coverageOpenDays).not.toContain("2026-11-21");
      // The day re-checked holds every record the server has for it, the appended one included.
      const day21 = after.get("2026-11-21");
      expect(day21?.local_count).toBe(day21?.server_total);
    } finally {
      await client.close();
    }
  });

  it("reads the server's today east of UTC by default (until = UTC date + 1), and keeps it open", async () => {
    // 20:00 UTC on 2026-11-21 is 01:30 on 2026-11-22 in Kolkata (UTC+05:30).
    const now = Date.UTC(2026, 10, 21, 20, 0, 0);
    sim = await startTestSimulator({ records: 200, days: 10, now, timeZone: "Asia/Kolkata" });
    const [fresh] = sim.control.append([{ at: now - 60_000, name: "east_gate", actionType: "gate_update" }]);
    expect(fresh?.date).toMatch(/Nov 22 2026/);
    store = openStore(":memory:");
    const client = createSyncClient(
      { baseUrl: sim.url, apiKey: sim.settings.apiKey, authHeader: sim.settings.authHeader },
      { rateLimits: [{ limit: 100_000, windowMs: 1000 }] },
    );
    try {
      const summary = await runSync(store, client, { since: "2026-11-19", now: () => now });
      expect(summary.range.until).toBe("2026-11-22");
      const stored = sqliteOf(store)
        .prepare("SELECT server_day FROM audit_logs WHERE id = ?")
        .pluck()
        .get(fresh?.id);
      expect(stored).toBe("2026-11-22");
      const day22 = coverageRows(store).find((r) => r.day === "2026-11-22");
      expect(day22).toMatchObject({ day_closed: 0, local_count: day22?.server_total });
      expect(day22?.server_total).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
