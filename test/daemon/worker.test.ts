import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Cycle, DAEMON_LEASE, runOnce, runWorker } from "../../src/daemon/worker.ts";
import { LockedError } from "../../src/errors.ts";
import { createLogger } from "../../src/log.ts";
import { acquireLease, readLease, releaseLease } from "../../src/store/leases.ts";
import { openStore, type Store } from "../../src/store/open.ts";

const opened: Store[] = [];
function tempStore(path?: string): Store {
  const store = openStore(path ?? join(mkdtempSync(join(tmpdir(), "flagtrail-daemon-")), "d.db"));
  opened.push(store);
  return store;
}
afterEach(() => {
  for (const store of opened.splice(0)) store.close();
});

function memoryLog() {
  const events: { level: string; event: string; reason?: string }[] = [];
  const log = createLogger({ json: true, write: (line) => events.push(JSON.parse(line)) });
  return { log, events };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("daemon worker", () => {
  it("runs a cycle every second, skips a tick while its cycle runs, and stops cleanly mid-cycle", async () => {
    const store = tempStore();
    const { log, events } = memoryLog();
    let started = 0;
    let finished = 0;
    let sawAbort = false;
    // Each cycle outlasts two ticks, so the tick in between must be skipped, never run in parallel.
    let running = 0;
    let maxRunning = 0;
    const cycle: Cycle = async (signal) => {
      started++;
      running++;
      maxRunning = Math.max(maxRunning, running);
      for (let i = 0; i < 22 && !signal.aborted; i++) await sleep(100);
      sawAbort ||= signal.aborted;
      running--;
      finished++;
      return { ok: true, fields: { n: started } };
    };
    const stop = new AbortController();
    const done = runWorker(
      { store, cycle, log },
      { cron: "* * * * * *", timezone: "UTC", holder: "test/1/daemon", leaseTtlMs: 5_000 },
      stop.signal,
    );
    while (started < 2) await sleep(50);
    expect((await readLease(store, DAEMON_LEASE))?.holder).toBe("test/1/daemon");
    await sleep(300); // the second cycle is now in flight
    stop.abort();
    await done;

    expect(maxRunning).toBe(1);
    expect(finished).toBe(started);
    expect(sawAbort).toBe(true);
    expect(events.some((e) => e.event === "tick.skipped")).toBe(true);
    expect(events.at(-1)?.event).toBe("daemon.stop");
    expect(await readLease(store, DAEMON_LEASE)).toBeUndefined();
  });

  it("a second worker on the same database runs no cycle while the first holds the lease", async () => {
    const first = tempStore();
    const second = tempStore(first.path);
    const a = memoryLog();
    const b = memoryLog();
    let cyclesA = 0;
    let cyclesB = 0;
    const stop = new AbortController();
    const options = { cron: "* * * * * *", timezone: "UTC", leaseTtlMs: 5_000 };
    const runA = runWorker(
      { store: first, log: a.log, cycle: async () => ({ ok: true, fields: { n: ++cyclesA } }) },
      { ...options, holder: "test/a/daemon" },
      stop.signal,
    );
    await sleep(100);
    const runB = runWorker(
      { store: second, log: b.log, cycle: async () => ({ ok: true, fields: { n: ++cyclesB } }) },
      { ...options, holder: "test/b/daemon" },
      stop.signal,
    );
    await sleep(2_300);
    stop.abort();
    await Promise.all([runA, runB]);

    expect(cyclesA).toBeGreaterThanOrEqual(2);
    expect(cyclesB).toBe(0);
    expect(b.events.filter((e) => e.event === "tick.skipped").length).toBeGreaterThanOrEqual(2);
  });

  it("a tick that takes the lease as the worker is stopped starts no cycle, and the stop releases the lease", async () => {
    const store = tempStore();
    const other = tempStore(store.path);
    await acquireLease(other, DAEMON_LEASE, "test/other/daemon", 60_000);
    const stop = new AbortController();
    const events: string[] = [];
    let startRefused!: () => void;
    const refused = new Promise<void>((resolve) => {
      startRefused = resolve;
    });
    const log = createLogger({
      json: true,
      write: (line) => {
        const { event } = JSON.parse(line) as { event: string };
        events.push(event);
        if (event === "lease.busy") startRefused();
        // The stop arrives while a tick holds the lease it has just taken, before the tick goes on.
        if (event === "lease.acquired") stop.abort();
      },
    });
    let cycles = 0;
    const done = runWorker(
      { store, log, cycle: async () => ({ ok: true, fields: { n: ++cycles } }) },
      { cron: "* * * * * *", timezone: "UTC", holder: "test/1/daemon", leaseTtlMs: 5_000 },
      stop.signal,
    );
    await refused; // the worker's start found the lease held; the next tick takes it
    await releaseLease(other, DAEMON_LEASE, "test/other/daemon");
    await done;

    expect(cycles).toBe(0);
    expect(events).not.toContain("cycle.start");
    expect(events.at(-1)).toBe("daemon.stop");
    expect(await readLease(store, DAEMON_LEASE)).toBeUndefined();
  });

  it("--once refuses with LockedError while another worker holds the lease, and a failed cycle reports ok=false", async () => {
    const store = tempStore();
    const { log } = memoryLog();
    const stop = new AbortController();
    const busy = runWorker(
      { store, log, cycle: async () => ({ ok: true, fields: {} }) },
      { cron: "0 0 1 1 *", timezone: "UTC", holder: "test/x/daemon", leaseTtlMs: 5_000 },
      stop.signal,
    );
    await sleep(100);
    const other = tempStore(store.path);
    await expect(
      runOnce(
        { store: other, log, cycle: async () => ({ ok: true, fields: {} }) },
        { holder: "test/y/daemon", leaseTtlMs: 5_000 },
        new AbortController().signal,
      ),
    ).rejects.toBeInstanceOf(LockedError);
    stop.abort();
    await busy;

    const outcome = await runOnce(
      {
        store: other,
        log,
        cycle: async () => {
          throw new Error("network down");
        },
      },
      { holder: "test/y/daemon", leaseTtlMs: 5_000 },
      new AbortController().signal,
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.fields.error).toBe("network down");
    expect(await readLease(other, DAEMON_LEASE)).toBeUndefined();
  });

  it("a stop after the sync part (during the report) logs the cycle interrupted, its outcome too", async () => {
    const store = tempStore();
    const { log, events } = memoryLog();
    const stop = new AbortController();
    // The sync part ended ok; the signal comes while the rest of the cycle runs.
    const cycle: Cycle = async () => {
      stop.abort();
      return { ok: true, fields: { runId: 1, outcome: "ok" } };
    };
    const outcome = await runOnce(
      { store, log, cycle },
      { holder: "test/z/daemon", leaseTtlMs: 5_000 },
      stop.signal,
    );
    expect(outcome).toMatchObject({
      ok: false,
      interrupted: true,
      fields: { runId: 1, outcome: "interrupted" },
    });
    const logged = events.find((e) => e.event === "cycle.interrupted") as Record<string, unknown> | undefined;
    expect(logged).toMatchObject({ level: "warn", runId: 1, outcome: "interrupted" });
  });
});
