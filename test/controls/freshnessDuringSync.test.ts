// A long manual backfill holds the store's `sync` lease for hours; the daemon's sync fails on it at each
// tick, and its freshness check after the failed sync judged the last *finished* sync: stale, while a sync
// was running right then, so it raised a finding and alerted it. Now a sync under way that began within
// the control's age counts as fresh; one that has run longer than that is a finding saying it still runs.
// Here the lease is held by a second handle of this process (live as a sync's: its pid lives, not expired;
// on PostgreSQL, its session's advisory lock), and a real receiver counts the alerts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leaseHolder } from "../../src/holders.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { acquireLease, releaseLease } from "../../src/store/leases.ts";
import { closeProjectStores, openStoreProjects } from "../../src/store/projectStores.ts";
import { type Receiver, startReceiver } from "../helpers/alertReceiver.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";

const HOUR = 3_600_000;

describe.each(ENGINES)("sync-freshness while a sync holds the lease on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let receiver: Receiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 20, days: 3, timeZone: "UTC" });
    receiver = await startReceiver("ok");
    store = await testStore(engine);
    const config = store.config({
      controls: [{ id: "fresh", kind: "sync-freshness", severity: "high", maxAgeHours: 6 }],
      sinks: [{ name: "hook", kind: "webhook", url: receiver.url, secretEnv: "FDS_SECRET" }],
    });
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config, FDS_SECRET: "s" });
    const sync = await runCliInProcess(["sync", "--since", daysAgo(2), "--quiet", "--no-entities"], { env });
    expect(sync.code, sync.stderr).toBe(0);
    // The last successful sync finished ten hours ago: stale for a 6-hour control.
    await store.query("UPDATE sync_runs SET finished_at = finished_at - ?, started_at = started_at - ?", [
      10 * HOUR,
      10 * HOUR,
    ]);
  });

  afterAll(async () => {
    await sim?.close();
    await receiver?.close();
  });

  /** `daemon --once` while a backfill that began `startedHoursAgo` holds the sync lease. */
  async function cycleDuringBackfill(startedHoursAgo: number) {
    const parts = await openStoreProjects(store.db, { readonly: false });
    // Not the in-process CLI's own holder (same host and pid): that one would take it as its own.
    const holder = `${leaseHolder("sync")}/backfill`;
    const startedAt = Date.now() - startedHoursAgo * HOUR;
    // Renewed as a sync renews it: not expired now.
    await acquireLease(parts[0]!.store, "sync", holder, (startedHoursAgo + 1) * HOUR, startedAt);
    try {
      return await runCliInProcess(["daemon", "--once"], { env });
    } finally {
      await releaseLease(parts[0]!.store, "sync", holder);
      await closeProjectStores(parts);
    }
  }

  const findings = () =>
    store.query<{ id: string; message: string }>("SELECT id, message FROM control_findings");

  it("a backfill that began within the age: the cycle fails on the lease, no finding, no alert", async () => {
    const cycle = await cycleDuringBackfill(2);
    expect(cycle.code).toBe(1);
    expect(cycle.stderr).toMatch(/Another sync is running on this database/);
    expect(await findings()).toEqual([]);
    expect(receiver.requests).toEqual([]);
  });

  it("one that has run longer than the age: one finding, saying a sync still runs, alerted once", async () => {
    const cycle = await cycleDuringBackfill(7);
    expect(cycle.code).toBe(1);
    const found = await findings();
    expect(found).toHaveLength(1);
    expect(found[0]!.id).toMatch(/^fresh:sync-/);
    expect(found[0]!.message).toMatch(
      /^the last successful sync finished \S+, more than 6 hours ago; a sync running since \S+ has not finished$/,
    );
    expect(receiver.requests.map((r) => r.key)).toEqual([`default:finding:${found[0]!.id}`]);
  });
});
