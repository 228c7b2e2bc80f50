// One delivery per sink at a time (src/controls/sinkLease.ts), on both engines, in this process with two
// handles on one store as two runs would have: while the first delivery holds a request open at a real
// receiver on 127.0.0.1, the second skips the sink (busy, nothing sent), and every alert or finding
// arrives exactly once. A holder that died does not keep the sink.

import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseControlsConfig, type SiemSink, type Sink } from "../../src/controls/config.ts";
import { deliverAlerts } from "../../src/controls/deliver.ts";
import { SinkBusyError, takeSinkLease } from "../../src/controls/sinkLease.ts";
import { DatabaseBusyError } from "../../src/errors.ts";
import { deliverSinks, deliverToSink } from "../../src/export/sinks/deliver.ts";
import { prepareRecords } from "../../src/records/prepare.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { type NewFinding, writeCheck } from "../../src/store/controls/findings.ts";
import { readCursor } from "../../src/store/export/cursors.ts";
import { acquireLease, DAEMON_LEASE, releaseLease } from "../../src/store/leases.ts";
import type { Store } from "../../src/store/open.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../../src/store/projectStores.ts";
import { commitSyncBatch, startRun } from "../../src/store/syncStore.ts";
import { type Receiver, startReceiver } from "../helpers/alertReceiver.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { waitUntil } from "../helpers/daemonProcess.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";
import { alertFinding, alertPayload } from "./findingRows.ts";

const ALERTS = 4;

const startGate = () => startReceiver("gate");

const finding = (n: number): NewFinding => alertFinding(n, { entity: `gate_${n}` });

const payloadOf = (f: NewFinding) => alertPayload(f);

const IDS = Array.from({ length: ALERTS }, (_, i) => `rr:rec${i + 1}`);
/** Their Idempotency-Keys: each finding's event id in project default. */
const KEYS = IDS.map((id) => `default:finding:${id}`);

describe.each(ENGINES)("delivery lease on %s", (engine) => {
  let store: TestStore;
  let first: ProjectStore[];
  let second: ProjectStore[];
  let receiver: Receiver;

  beforeEach(async () => {
    store = await testStore(engine);
    first = await openStoreProjects(store.db);
    second = await openStoreProjects(store.db);
    receiver = await startGate();
    process.env.LEASE_TEST_SECRET = "whsec-lease-test";
  });

  afterEach(async () => {
    delete process.env.LEASE_TEST_SECRET;
    await closeProjectStores(first);
    await closeProjectStores(second);
    await receiver.close();
  });

  const sinksOf = (sinks: unknown[]): Sink[] =>
    parseControlsConfig(JSON.stringify({ sinks }), "test.json").sinks;

  async function plant(sinks: readonly Sink[]) {
    await writeCheck(first[0]!.store, {
      checkedAt: Date.now(),
      periodStart: 0,
      periodEnd: Date.now(),
      lastSeq: 0,
      periodGiven: false,
      findings: IDS.map((_, i) => finding(i + 1)),
      tickets: [],
      alertsFor: (f) => sinks.map((s) => ({ sink: s.name, payload: payloadOf(f) })),
    });
  }

  const deliverLeases = () =>
    store.query<{ name: string }>("SELECT name FROM leases WHERE name LIKE 'deliver:%'");

  it("two alert deliveries at once: the second skips the sink, each alert arrives once", async () => {
    const sinks = sinksOf([
      { name: "hook", kind: "webhook", url: receiver.url, secretEnv: "LEASE_TEST_SECRET", backoffSeconds: 0 },
    ]);
    await plant(sinks);
    const running = deliverAlerts(first[0]!.store, sinks, Date.now());
    await waitUntil(() => receiver.requests.length === 1, "the first delivery's first request");
    // The first run is under way (its request held): the second finds the lease held and sends nothing.
    expect(await deliverAlerts(second[0]!.store, sinks, Date.now())).toEqual({
      delivered: 0,
      failed: 0,
      busy: ["hook"],
    });
    expect(receiver.requests).toHaveLength(1);
    receiver.open();
    expect(await running).toEqual({ delivered: ALERTS, failed: 0 });
    expect(receiver.requests.map((r) => r.key).sort()).toEqual(KEYS);
    // Given back: a later run takes it, and finds nothing due.
    expect(await deliverLeases()).toEqual([]);
    expect(await deliverAlerts(second[0]!.store, sinks, Date.now())).toEqual({ delivered: 0, failed: 0 });
    expect(receiver.requests).toHaveLength(ALERTS);
  });

  it("two SIEM deliveries at once: the second is refused as busy, each finding's event arrives once", async () => {
    const [sink] = sinksOf([
      { name: "siem", kind: "http", url: receiver.url, format: "raw", batchSize: 1, retries: 0 },
    ]) as SiemSink[];
    await plant([sink!]);
    const running = deliverToSink(first[0]!, sink!, { findingsOnly: true });
    await waitUntil(() => receiver.requests.length === 1, "the first delivery's first batch");
    const busy = await deliverToSink(second[0]!, sink!, { findingsOnly: true }).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(SinkBusyError);
    expect((busy as Error).message).toBe('sink "siem" is being delivered by another run');
    expect(receiver.requests).toHaveLength(1);
    receiver.open();
    expect(await running).toEqual({ events: 0, findings: ALERTS });
    const ids = receiver.requests.flatMap((r) => r.lines.map((l) => (JSON.parse(l) as { id: string }).id));
    expect(ids.sort()).toEqual(IDS);
    expect(await deliverLeases()).toEqual([]);
  });

  // The run reads which sinks wait once (runOutbox), but each sink's rows only under its lease: rows read
  // at the run's start would send again what another run delivered while this one was at the first sink.
  it("a run held up at its first SIEM sink does not send again the second's findings another run delivered meanwhile", async () => {
    const other = await startReceiver("ok");
    try {
      const sinks = sinksOf([
        { name: "siem-a", kind: "http", url: receiver.url, format: "raw", batchSize: 1, retries: 0 },
        { name: "siem-b", kind: "http", url: other.url, format: "raw", retries: 0 },
      ]) as SiemSink[];
      await plant(sinks);
      const running = deliverSinks(first[0]!, sinks, { findingsOnly: true });
      await waitUntil(() => receiver.requests.length === 1, "the first run's first batch to siem-a");
      expect(await deliverToSink(second[0]!, sinks[1]!, { findingsOnly: true })).toEqual({
        events: 0,
        findings: ALERTS,
      });
      receiver.open();
      expect(await running).toEqual({
        "siem-a": { events: 0, findings: ALERTS },
        "siem-b": { events: 0, findings: 0 },
      });
      const ids = other.requests.flatMap((r) => r.lines.map((l) => (JSON.parse(l) as { id: string }).id));
      expect(ids.sort()).toEqual(IDS);
    } finally {
      await other.close();
    }
  });

  const twoHooks = (other: Receiver) =>
    sinksOf(
      [receiver, other].map((r, i) => ({
        name: `hook${i + 1}`,
        kind: "webhook",
        url: r.url,
        secretEnv: "LEASE_TEST_SECRET",
        backoffSeconds: 0,
      })),
    );

  it("two sinks, one held by another run: the other's alerts go, each once; the held one's wait for it", async () => {
    const other = await startReceiver("ok");
    try {
      const sinks = twoHooks(other);
      await plant(sinks);
      receiver.open();
      const held = await takeSinkLease(second[0]!.store, "hook1", undefined);
      try {
        expect(await deliverAlerts(first[0]!.store, sinks, Date.now())).toEqual({
          delivered: ALERTS,
          failed: 0,
          busy: ["hook1"],
        });
      } finally {
        await held.release();
      }
      expect(receiver.requests).toHaveLength(0);
      expect(other.requests.map((r) => r.key).sort()).toEqual(KEYS);
      expect(await deliverLeases()).toEqual([]);
      expect(await deliverAlerts(first[0]!.store, sinks, Date.now())).toEqual({
        delivered: ALERTS,
        failed: 0,
      });
      expect(receiver.requests.map((r) => r.key).sort()).toEqual(KEYS);
      expect(other.requests).toHaveLength(ALERTS);
    } finally {
      await other.close();
    }
  });

  it("six alert sinks and six SIEM sinks beside a held daemon lease all deliver (on PostgreSQL a lease holds a pooled session)", async () => {
    const names = Array.from({ length: 6 }, (_, i) => `s${i + 1}`);
    const hooks = names.map((n) => ({
      name: `hook-${n}`,
      kind: "webhook",
      url: receiver.url,
      secretEnv: "LEASE_TEST_SECRET",
      backoffSeconds: 0,
    }));
    const siems = names.map((n) => ({
      name: `siem-${n}`,
      kind: "http",
      url: receiver.url,
      format: "raw",
      retries: 0,
    }));
    const sinks = sinksOf([...hooks, ...siems]);
    await plant(sinks);
    receiver.open();
    const daemon = await acquireLease(first[0]!.store, DAEMON_LEASE, "test-daemon", 60_000);
    expect(daemon).not.toBeNull();
    try {
      expect(await deliverAlerts(first[0]!.store, sinks, Date.now())).toEqual({
        delivered: 6 * ALERTS,
        failed: 0,
      });
      const sent = await deliverSinks(
        first[0]!,
        sinks.filter((s): s is SiemSink => s.kind === "http"),
      );
      expect(Object.values(sent)).toEqual(names.map(() => ({ events: 0, findings: ALERTS })));
    } finally {
      await releaseLease(first[0]!.store, DAEMON_LEASE, "test-daemon");
    }
    expect(await deliverLeases()).toEqual([]);
  });

  const RECORDS = 3;

  /** Stores RECORDS audit records as a sync would; returns their ids in seq order. */
  async function plantRecords(): Promise<string[]> {
    const at = Date.UTC(2026, 10, 20, 12, 0, 0);
    const records = Array.from({ length: RECORDS }, (_, i) => makeRecord(at + i * 1000));
    const target = first[0]!.store;
    const runId = await startRun(target, { filterKey: "all", params: {}, now: at });
    const counters = {
      ...{ fetched: 0, inserted: 0, duplicates: 0, mutations: 0, quarantined: 0 },
      ...{ warnings: 0, requests: 0, throttled: 0, retries: 0 },
    };
    const day = { from: "2026-11-20", to: "2026-11-20" };
    const page = { prepared: prepareRecords(records), requestPath: "/console/v1/audit_logs", dayRange: day };
    await commitSyncBatch(target, { plan: null, runId, pages: [page], counters, now: at });
    return records.map((r) => r.id);
  }

  const twoSiems = (other: Receiver) =>
    sinksOf(
      [receiver, other].map((r, i) => ({
        name: `siem${i + 1}`,
        kind: "http",
        url: r.url,
        format: "raw",
        batchSize: 2,
        retries: 0,
      })),
    ) as SiemSink[];

  /** The ids of the events a receiver got, in arrival order (records' and findings' raw JSON). */
  const idsAt = (r: Receiver) =>
    r.requests.flatMap((q) => q.lines.map((l) => (JSON.parse(l) as { id: string }).id));

  const cursorOf = (sink: string) => readCursor(first[0]!.store, first[0]!.project, `sink:${sink}`);

  it("two SIEM sinks, one held by another run: the other gets its records and findings once; the held one's cursor and rows wait for it", async () => {
    const other = await startReceiver("ok");
    try {
      const sinks = twoSiems(other);
      const records = await plantRecords();
      await plant(sinks);
      receiver.open();
      const held = await takeSinkLease(second[0]!.store, "siem1", undefined);
      let sent: Awaited<ReturnType<typeof deliverSinks>>;
      try {
        sent = await deliverSinks(first[0]!, sinks);
      } finally {
        await held.release();
      }
      expect(sent).toEqual({
        siem1: { skipped: 'sink "siem1" is being delivered by another run' },
        siem2: { events: RECORDS, findings: ALERTS },
      });
      expect(Object.keys(sent)).toEqual(["siem1", "siem2"]);
      expect(receiver.requests).toHaveLength(0);
      expect(idsAt(other)).toEqual([...records, ...IDS]);
      expect(await cursorOf("siem1")).toBe(0);
      expect(await cursorOf("siem2")).toBe(RECORDS);
      expect(await deliverLeases()).toEqual([]);
      // The lease given back: the next run sends siem1 everything from its own cursor, siem2 nothing again.
      expect(await deliverSinks(first[0]!, sinks)).toEqual({
        siem1: { events: RECORDS, findings: ALERTS },
        siem2: { events: 0, findings: 0 },
      });
      expect(idsAt(receiver)).toEqual([...records, ...IDS]);
      expect(idsAt(other)).toHaveLength(RECORDS + ALERTS);
      expect(await cursorOf("siem1")).toBe(RECORDS);
      expect(await deliverLeases()).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("status lists each delivery lease: a run delivering now (who, until when), one left by a killed run", async () => {
    const held = await takeSinkLease(second[0]!.store, "hook1", undefined);
    try {
      // A process of this host that has exited, its lease good for another hour.
      const dead = spawnSync(process.execPath, ["-e", ""]).pid;
      const at = Date.UTC(2026, 10, 27, 9, 0, 0);
      const crashed = `${hostname()}/${dead}/deliver/crashed`;
      await store.query(
        "INSERT INTO leases (name, holder, pid, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?)",
        ["deliver:hook2", crashed, dead, at, Date.now() + 3_600_000],
      );
      const [live] = await store.query<{ holder: string; acquired_at: number; expires_at: number }>(
        "SELECT holder, acquired_at, expires_at FROM leases WHERE name = 'deliver:hook1'",
      );
      const iso = (ms: number) => new Date(Number(ms)).toISOString();
      const [stale] = await store.query<{ expires_at: number }>(
        "SELECT expires_at FROM leases WHERE name = 'deliver:hook2'",
      );
      const text = await runCliInProcess(["status", "--db", store.db]);
      expect(text.code).toBe(0);
      const lines = text.stdout.split("\n").filter((line) => line.includes("sink "));
      expect(lines).toEqual([
        `Delivery to sink "hook1" running since ${iso(live!.acquired_at)}: ${live!.holder}, pid ${process.pid} ` +
          `(lease renewed until ${iso(live!.expires_at)}); other runs skip the sink meanwhile`,
        `Delivery lease of sink "hook2" left by ${crashed}, pid ${dead} (since ${iso(at)}, until ` +
          `${iso(stale!.expires_at)}): it expired or its holder is gone, the next delivery to the sink takes it over`,
      ]);
      const json = await runCliInProcess(["status", "--json", "--db", store.db]);
      expect(JSON.parse(json.stdout).deliveries).toEqual([
        {
          sink: "hook1",
          holder: live!.holder,
          pid: process.pid,
          since: iso(live!.acquired_at),
          expiresAt: iso(live!.expires_at),
          live: true,
        },
        {
          sink: "hook2",
          holder: crashed,
          pid: dead,
          since: iso(at),
          expiresAt: iso(stale!.expires_at),
          live: false,
        },
      ]);
    } finally {
      await held.release();
    }
    const after = await runCliInProcess(["status", "--json", "--db", store.db]);
    expect(JSON.parse(after.stdout).deliveries.map((d: { sink: string }) => d.sink)).toEqual(["hook2"]);
  });

  it.runIf(engine === "sqlite")(
    "SQLite: a database too busy to take the delivery lease is a failure, not a delivery by another run",
    async () => {
      const sinks = sinksOf([
        {
          name: "hook",
          kind: "webhook",
          url: receiver.url,
          secretEnv: "LEASE_TEST_SECRET",
          backoffSeconds: 0,
        },
        { name: "siem", kind: "http", url: receiver.url, format: "raw", batchSize: 1, retries: 0 },
      ]);
      await plant(sinks);
      receiver.open();
      // Another process keeps the write lock; this handle gives up after 100 ms instead of 5 s.
      const sqlite = sqliteOf(second[0]!.store as Store);
      sqlite.pragma("busy_timeout = 100");
      const locker = new Database(store.db);
      locker.exec("BEGIN IMMEDIATE");
      const busy = (lease: string) =>
        `The database is busy: another process kept it locked for too long while taking the ${lease} lease. Try again.`;
      try {
        const alerts = await deliverAlerts(second[0]!.store, sinks, Date.now()).catch((e: unknown) => e);
        expect(alerts).toBeInstanceOf(DatabaseBusyError);
        expect(alerts).not.toBeInstanceOf(SinkBusyError);
        expect((alerts as Error).message).toBe(busy("deliver:hook"));
        const siem = sinks[1] as SiemSink;
        const events = await deliverToSink(second[0]!, siem, { findingsOnly: true }).catch((e: unknown) => e);
        expect(events).toBeInstanceOf(DatabaseBusyError);
        expect(events).not.toBeInstanceOf(SinkBusyError);
        expect((events as Error).message).toBe(busy("deliver:siem"));
        expect(receiver.requests).toHaveLength(0);
      } finally {
        locker.exec("ROLLBACK");
        locker.close();
        sqlite.pragma("busy_timeout = 5000");
      }
      // The lock gone, the same run's next try delivers everything.
      expect(await deliverAlerts(second[0]!.store, sinks, Date.now())).toEqual({
        delivered: ALERTS,
        failed: 0,
      });
      expect(receiver.requests.map((r) => r.key).sort()).toEqual(KEYS);
    },
  );

  it("a lease left by a holder that died does not keep the sink", async () => {
    const sinks = sinksOf([
      { name: "hook", kind: "webhook", url: receiver.url, secretEnv: "LEASE_TEST_SECRET", backoffSeconds: 0 },
    ]);
    await plant(sinks);
    receiver.open();
    // A process of this host that has exited, its lease good for another hour (on PostgreSQL no session
    // holds its lock: the lock decides there).
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const now = Date.now();
    await store.query(
      "INSERT INTO leases (name, holder, pid, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      ["deliver:hook", `${hostname()}/${dead}/deliver/crashed`, dead, now, now + 3_600_000],
    );
    expect(await deliverAlerts(second[0]!.store, sinks, Date.now())).toEqual({
      delivered: ALERTS,
      failed: 0,
    });
    expect(receiver.requests.map((r) => r.key).sort()).toEqual(KEYS);
  });

  it.runIf(engine === "sqlite")(
    "SQLite: a live-looking lease of another host holds the sink until it expires",
    async () => {
      const sinks = sinksOf([
        {
          name: "hook",
          kind: "webhook",
          url: receiver.url,
          secretEnv: "LEASE_TEST_SECRET",
          backoffSeconds: 0,
        },
      ]);
      await plant(sinks);
      receiver.open();
      const now = Date.now();
      const lease = ["deliver:hook", "elsewhere.example/4242/deliver/x", 4242, now];
      await store.query(
        "INSERT INTO leases (name, holder, pid, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?)",
        [...lease, now + 3_600_000],
      );
      expect(await deliverAlerts(second[0]!.store, sinks, Date.now())).toMatchObject({ busy: ["hook"] });
      expect(receiver.requests).toHaveLength(0);
      await store.query("UPDATE leases SET expires_at = ? WHERE name = 'deliver:hook'", [now - 1]);
      expect(await deliverAlerts(second[0]!.store, sinks, Date.now())).toEqual({
        delivered: ALERTS,
        failed: 0,
      });
    },
  );
});
