// Parity of the two engines, proven in-process: the same simulated history synced (runSync, no CLI) into a
// SQLite file and into the real PostgreSQL of the test run reads back the same through every front door of
// the store — status, every report query, verify — and the write-side primitives (leases) behave the same.
// The spawned same-history test (test/pg/sameHistory.test.ts) stays the end-to-end check; this one is fast
// enough to run on every change of a query, and names the query that differs.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LockedError } from "../../src/errors.ts";
import { resolvePeriod } from "../../src/report/period.ts";
import {
  REJECTION_ACTION_TYPES,
  REVIEW_EXEMPT_ACTION_TYPES,
  REVIEW_FLOWS,
  REVIEW_WINDOW_MS,
} from "../../src/report/reviews.ts";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.ts";
import {
  QUERIES,
  type ReportParams,
  type ReportQueryName,
  readReportSnapshot,
} from "../../src/store/reportQueries.ts";
import { readStatus } from "../../src/store/status.ts";
import { acquireLease, openStore, releaseLease, renewLease, type Store } from "../../src/store/syncStore.ts";
import { createSyncClient } from "../../src/sync/client.ts";
import { runSync } from "../../src/sync/runSync.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { freshDatabase } from "../pg/cluster.ts";

// One request at a time: pages fetched concurrently commit in arrival order, and the chain follows it.
// A fixed clock: the history, the sync's "today" and the report's month do not move with the calendar.
const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);
const ENGINES = ["sqlite", "postgres"] as const;
type Engine = (typeof ENGINES)[number];

let sim: RunningSimulator;
const stores = {} as Record<Engine, Store>;

async function syncInto(value: string): Promise<Store> {
  const store = await openStore(value);
  const client = createSyncClient(
    { baseUrl: sim.url, apiKey: sim.settings.apiKey, authHeader: sim.settings.authHeader },
    { rateLimits: [{ limit: 100_000, windowMs: 1000 }] },
  );
  const summary = await runSync(store, client, {
    since: "2026-08-01",
    now: () => NOW,
    entities: false,
    concurrency: 1,
  });
  expect(summary.outcome).toBe("ok");
  return store;
}

beforeAll(async () => {
  sim = await startSimulator({ host: "127.0.0.1", port: 0, seed: 11, records: 1500, days: 100, now: NOW });
  stores.sqlite = await syncInto(join(mkdtempSync(join(tmpdir(), "flagtrail-parity-")), "store.db"));
  stores.postgres = await syncInto(await freshDatabase("parity"));
});

afterAll(async () => {
  for (const store of Object.values(stores)) await store?.close();
  await sim?.close();
});

/** The October report's parameters, as src/report/dataFiles.ts builds them (server days from the store). */
function octoberParams(): ReportParams {
  const period = resolvePeriod("2026-10-01", "2026-10-31", "Europe/Berlin");
  return {
    start: period.start,
    end: period.end,
    actionTypes: null,
    days: period.days,
    rejects: REJECTION_ACTION_TYPES,
    exempt: REVIEW_EXEMPT_ACTION_TYPES,
    flows: REVIEW_FLOWS,
    reviewWindow: REVIEW_WINDOW_MS,
    serverFromDay: "2026-09-30",
    serverToDay: "2026-10-31",
  };
}

/** Numbers as the report sees them: PostgreSQL's bigint comes back as text, SQLite's as a number. */
function normalised(rows: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([k, v]) => [k, typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v]),
    ),
  );
}

async function readAll(engine: Engine, name: ReportQueryName): Promise<Record<string, unknown>[]> {
  return readReportSnapshot(stores[engine], async (snapshot) => {
    const rows: Record<string, unknown>[] = [];
    for await (const batch of snapshot.batches(name, octoberParams()))
      rows.push(...(batch as unknown as Record<string, unknown>[]));
    return normalised(rows);
  });
}

describe("the same history on both engines", () => {
  it("holds the same records and chain head", async () => {
    const heads = await Promise.all(
      ENGINES.map((e) =>
        readReportSnapshot(stores[e], async (s) => ({
          head: await s.chainHead(),
          records: await s.storedRecords(),
        })),
      ),
    );
    expect(heads[0]!.records).toBeGreaterThan(500);
    expect(heads[1]).toEqual(heads[0]);
  });

  const names = Object.keys(QUERIES) as ReportQueryName[];
  it.each(names)("report query %s returns the same rows in the same order", async (name) => {
    const [sqlite, postgres] = await Promise.all(ENGINES.map((e) => readAll(e, name)));
    expect(postgres).toEqual(sqlite);
  });

  it("the month's queries are not all empty (the comparison above compares something)", async () => {
    const sizes = await Promise.all(names.map(async (n) => (await readAll("sqlite", n)).length));
    expect(sizes.filter((n) => n > 0).length).toBeGreaterThan(names.length / 2);
  });

  it("status reads the same counts", async () => {
    const [sqlite, postgres] = await Promise.all(ENGINES.map((e) => readStatus(stores[e])));
    const counts = (s: Awaited<ReturnType<typeof readStatus>>) => ({
      records: s.records,
      chainHead: s.chainHead,
    });
    expect(counts(postgres!)).toEqual(counts(sqlite!));
    expect(sqlite!.records.total).toBeGreaterThan(500);
  });

  it("verify walks the same chain on both (and finds each intact: it throws otherwise)", async () => {
    const [sqlite, postgres] = await Promise.all(ENGINES.map((e) => verifyStore(stores[e])));
    expect(sqlite!.records).toBeGreaterThan(500);
    const walked = (c: Awaited<ReturnType<typeof verifyStore>>) => ({
      records: c.records,
      head: c.head,
      revisions: c.revisions,
    });
    expect(walked(postgres!)).toEqual(walked(sqlite!));
  });
});

describe.each(ENGINES)("leases on %s", (engine) => {
  it("one holder at a time; renew and release only by the holder", async () => {
    const store = stores[engine];
    const name = `parity-${engine}`;
    const now = NOW;
    expect((await acquireLease(store, name, "a", 60_000, now)).lease).toMatchObject({ holder: "a" });
    await expect(acquireLease(store, name, "b", 60_000, now + 1)).rejects.toThrow(LockedError);
    await expect(renewLease(store, name, "b", 60_000, now + 2)).rejects.toThrow(LockedError);
    expect(await renewLease(store, name, "a", 60_000, now + 2)).toMatchObject({ expiresAt: now + 60_002 });
    expect(await releaseLease(store, name, "b")).toBe(false);
    expect(await releaseLease(store, name, "a")).toBe(true);
    expect((await acquireLease(store, name, "b", 60_000, now + 3)).lease).toMatchObject({ holder: "b" });
    expect(await releaseLease(store, name, "b")).toBe(true);
    // Expiry differs by design: SQLite's lease ends at expires_at, PostgreSQL's with its holder's session
    // (an advisory lock); test/store/leases.test.ts and test/pg/daemon.test.ts cover each.
  });
});
