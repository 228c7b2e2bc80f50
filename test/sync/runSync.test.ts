import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AuditLogQuery } from "../../src/api/client.ts";
import { ApiError, AuthError, LockedError } from "../../src/errors.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { readPendingCoverageDays } from "../../src/store/coverageState.ts";
import { acquireLease } from "../../src/store/leases.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { backfillRuleDiffs } from "../../src/store/ruleDiffs.ts";
import { readCheckpoint, readPlan, readWindows } from "../../src/store/syncStore.ts";
import { runSync, type SyncOptions } from "../../src/sync/runSync.ts";
import { makeRecord, utcDateText, utcTimeText } from "../helpers/auditRecords.ts";
import { FakeConsoleClient } from "../helpers/fakeConsoleClient.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2024, 5, 30, 12, 0, 0); // today = 2024-06-30
const base: SyncOptions = { now: () => NOW, pageSize: 10, concurrency: 2 };

/** `count` records spread evenly over the `days` days before NOW. */
function history(count: number, days: number, start = NOW - days * DAY) {
  const step = Math.floor((days * DAY) / count);
  return Array.from({ length: count }, (_, i) => {
    const at = start + i * step;
    return { at, record: makeRecord(at) };
  });
}

function storedIds(store: Store): string[] {
  return (sqliteOf(store).prepare("SELECT id FROM audit_logs").pluck().all() as string[]).sort();
}

function runRows(store: Store) {
  return sqliteOf(store)
    .prepare("SELECT outcome, filter_key, inserted, error FROM sync_runs ORDER BY id")
    .all() as {
    outcome: string;
    filter_key: string;
    inserted: number;
    error: string | null;
  }[];
}

describe("runSync", () => {
  it("backfills a range longer than 90 days in windows with explicit dates and sets the checkpoint", async () => {
    const store = openStore(":memory:");
    const entries = history(300, 200);
    const client = new FakeConsoleClient(entries);
    const summary = await runSync(store, client, { ...base, since: "2023-12-01" });

    expect(storedIds(store)).toEqual(client.ids().sort());
    expect(summary).toMatchObject({
      outcome: "ok",
      fetched: expect.any(Number),
      inserted: 300,
      mutations: 0,
    });
    expect(summary.windows).toBeGreaterThanOrEqual(7);
    expect(summary.range).toEqual({ since: "2023-12-01", until: "2024-07-01" });
    const pageQueries = client.queries.filter((q) => q.limit !== 1);
    expect(pageQueries.every((q) => q.startDate && q.endDate && q.latestID === undefined)).toBe(true);
    const newest = entries.at(-1)!.record.id;
    expect((await readCheckpoint(store, "all"))?.latestId).toBe(newest);
    expect(await readPlan(store, "all")).toBeUndefined();
    expect(await readWindows(store, "all")).toEqual([]);
    expect(runRows(store)).toEqual([{ outcome: "ok", filter_key: "all", inserted: 300, error: null }]);
    // Coverage from paging alone: every window's totalItems matched its local count, so every day of
    // the range is checked without a single count request.
    expect(client.queries.filter((q) => q.limit === 1)).toHaveLength(0);
    expect(summary.coverageRequests).toBe(0);
    expect(summary.coverageDays).toBe(214); // 2023-12-01 .. 2024-07-01
    expect(sqliteOf(store).prepare("SELECT count(*) FROM coverage").pluck().get()).toBe(214);
    expect(summary.coverageGaps).toEqual([]);
    // A backfill into an empty store built its indexes after the load, and diffed every rule edit: the
    // rule-diff mark stands at the chain head, so a report (or the next sync) rescans nothing.
    expect(sqliteOf(store).prepare("SELECT value FROM meta WHERE key = 'bulk_load'").get()).toBeUndefined();
    const indexes = sqliteOf(store)
      .prepare(
        "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = 'audit_logs'",
      )
      .pluck()
      .all();
    expect(indexes).toEqual(
      expect.arrayContaining(["audit_logs_server_day_idx", "audit_logs_fts_after_insert"]),
    );
    expect(await backfillRuleDiffs(store)).toEqual({ diffed: 0, scanned: 0 });
  });

  it("defaults a first run to the last 90 days and says so", async () => {
    const store = openStore(":memory:");
    const notices: string[] = [];
    const client = new FakeConsoleClient(history(50, 120));
    const summary = await runSync(store, client, {
      ...base,
      onEvent: (e) => {
        if (e.type === "notice") notices.push(e.message);
      },
    });
    // --until defaults to the UTC date + 1 (a server east of UTC may already be on 2024-07-01).
    expect(summary.range).toEqual({ since: "2024-04-02", until: "2024-07-01" });
    // It names the option that reaches further back (sync's and daemon's --since), not "a start day".
    expect(notices).toContain(
      "No checkpoint for this filter set: syncing the last 90 days (2024-04-02 to 2024-07-01). Give --since YYYY-MM-DD for older history.",
    );
    expect(Math.min(...client.queries.map((q) => Date.parse(q.startDate)))).toBe(Date.parse("2024-04-02"));
    expect(Math.max(...client.queries.map((q) => Date.parse(q.endDate)))).toBe(Date.parse("2024-07-01"));
  });

  it("fetches only new records on an incremental run (latestID, lookback, stop at the checkpoint)", async () => {
    const store = openStore(":memory:");
    const client = new FakeConsoleClient(history(100, 60));
    await runSync(store, client, { ...base, since: "2024-04-01" });
    const checkpoint = (await readCheckpoint(store, "all"))!;
    expect(checkpoint.serverDay).toBe("2024-06-29");
    const fresh = [makeRecord(NOW + 1000), makeRecord(NOW + 2000), makeRecord(NOW + 3000)];
    for (const [i, r] of fresh.entries()) client.add(NOW + 1000 * (i + 1), r);
    client.queries.length = 0;

    const summary = await runSync(store, client, { ...base, coverage: false });
    expect(summary).toMatchObject({ inserted: 3 });
    // The checkpoint's day onwards with latestID; the two lookback days (and the checkpoint's day)
    // re-read whole, without it: their records come back as duplicates.
    expect(client.queries).toEqual([
      expect.objectContaining({
        startDate: "2024-06-29",
        endDate: "2024-07-01", // the default --until: UTC date + 1
        latestID: checkpoint.latestId,
        page: 1,
      }),
      expect.objectContaining({ startDate: "2024-06-27", endDate: "2024-06-29", page: 1 }),
    ]);
    expect(client.queries[1]?.latestID).toBeUndefined();
    expect(summary.duplicates).toBe(summary.fetched - 3);
    expect((await readCheckpoint(store, "all"))?.latestId).toBe(fresh[2]!.id);
    // Records stored one batch at a time move the rule-diff mark along: nothing left to rescan.
    expect(await backfillRuleDiffs(store)).toEqual({ diffed: 0, scanned: 0 });
  });

  it("re-reads the lookback days without latestID: a back-dated record is stored even without coverage", async () => {
    const store = openStore(":memory:");
    const client = new FakeConsoleClient(history(40, 10));
    await runSync(store, client, { ...base, since: "2024-06-15", coverage: false });
    expect((await readCheckpoint(store, "all"))?.serverDay).toBe("2024-06-30");
    // Arrives late, dated the day before yesterday: older than the checkpoint, so latestID hides it.
    const late = NOW - 1.5 * DAY;
    const lateRecord = makeRecord(late);
    client.add(late, lateRecord);
    const summary = await runSync(store, client, { ...base, coverage: false });
    expect(summary.inserted).toBe(1);
    expect(storedIds(store)).toContain(lateRecord.id);
    // Outside the lookback it stays for coverage or --since to find: lookback 0 reads no old day.
    const older = NOW - 5 * DAY;
    const olderRecord = makeRecord(older);
    client.add(older, olderRecord);
    client.queries.length = 0;
    await runSync(store, client, { ...base, coverage: false, lookbackDays: 0 });
    expect(client.queries.every((q) => q.latestID !== undefined)).toBe(true);
    expect(storedIds(store)).not.toContain(olderRecord.id);
  });

  it("stops at the checkpoint id even when the server ignores latestID", async () => {
    const store = openStore(":memory:");
    const client = new FakeConsoleClient(history(40, 2));
    await runSync(store, client, { ...base, since: "2024-06-27", coverage: false });
    for (let i = 1; i <= 3; i++) client.add(NOW + i * 1000, makeRecord(NOW + i * 1000));
    const ignoring = Object.assign(Object.create(client), {
      listAuditLogs: (q: AuditLogQuery, s?: AbortSignal) =>
        client.listAuditLogs({ ...q, latestID: undefined }, s),
    }) as FakeConsoleClient;
    client.queries.length = 0;
    const summary = await runSync(store, ignoring, { ...base, coverage: false, lookbackDays: 0 });
    expect(summary.inserted).toBe(3);
    expect(client.queries).toHaveLength(1); // the first page held the checkpoint: no page 2
  });

  it("loses nothing when records are inserted at the head while paging", async () => {
    const store = openStore(":memory:");
    let inserted = 0;
    const client = new FakeConsoleClient(history(95, 5), {
      beforeRequest: (q) => {
        // Before every page after the first, two new records arrive at the head.
        if (q.page > 1 && inserted < 20) {
          for (let i = 0; i < 2; i++) {
            inserted += 1;
            client.add(NOW + inserted * 1000, makeRecord(NOW + inserted * 1000));
          }
        }
      },
    });
    const first = await runSync(store, client, {
      ...base,
      since: "2024-06-20",
      concurrency: 1,
      coverage: false,
    });
    expect(first.duplicates).toBeGreaterThan(0); // pages shifted: re-read records were deduplicated
    const original = client.ids().slice(0, 95);
    expect(storedIds(store)).toEqual(expect.arrayContaining(original));
    await runSync(store, client, { ...base, coverage: false });
    expect(storedIds(store)).toEqual(client.ids().sort());
  });

  it("pages 1000 records of one second across page boundaries, with a clamped page size", async () => {
    const store = openStore(":memory:");
    const second = NOW - 3600_000;
    const client = new FakeConsoleClient(
      Array.from({ length: 1000 }, () => ({ at: second, record: makeRecord(second) })),
      { maxLimit: 30 },
    );
    const summary = await runSync(store, client, { ...base, pageSize: 100, since: "2024-06-30" });
    expect(storedIds(store)).toEqual(client.ids().sort());
    expect(summary.duplicates).toBe(0);
    const pages = client.queries.filter((q) => q.limit === 100).map((q) => q.page);
    expect(Math.max(...pages)).toBe(34); // 1000 / 30 rounded up: the clamped size drives paging
  });

  it("keeps paging past a short page when totalItems says more remain (a silent clamp)", async () => {
    const store = openStore(":memory:");
    const client = new FakeConsoleClient(history(95, 3), { maxLimit: 30, silentClamp: true });
    const summary = await runSync(store, client, { ...base, pageSize: 100, since: "2024-06-26" });
    expect(storedIds(store)).toEqual(client.ids().sort());
    expect(summary.coverageGaps).toEqual([]);
    const pages = client.queries.filter((q) => q.limit === 100).map((q) => q.page);
    expect(Math.max(...pages)).toBe(4); // 95 records, 30 a page, although itemsPerPage said 100
  });

  it("keeps per-filter-set checkpoints: a filtered run never moves the unfiltered checkpoint", async () => {
    const store = openStore(":memory:");
    const client = new FakeConsoleClient(history(30, 10));
    await runSync(store, client, { ...base, since: "2024-06-10", coverage: false });
    const unfiltered = (await readCheckpoint(store, "all"))!;
    expect(unfiltered.latestId).toBe(client.ids().at(-1));

    // Newer records of one type; a sync filtered on that type reads and checkpoints them.
    const newer = [1, 2].map((i) => makeRecord(NOW + i * 1000, { actionType: "experiment_start" }));
    for (const [i, r] of newer.entries()) client.add(NOW + (i + 1) * 1000, r);
    const filtered = await runSync(store, client, {
      ...base,
      since: "2024-06-10",
      actionTypes: ["experiment_start"],
      coverage: false,
    });
    expect(filtered.inserted).toBe(2);
    expect((await readCheckpoint(store, "types:experiment_start"))?.latestId).toBe(newer[1]!.id);
    expect(await readCheckpoint(store, "all")).toEqual(unfiltered); // not advanced, not touched

    // The next unfiltered run still starts from its own checkpoint.
    client.queries.length = 0;
    await runSync(store, client, { ...base, coverage: false });
    const withLatest = client.queries.filter((q) => q.latestID !== undefined);
    expect(withLatest.map((q) => q.latestID)).toEqual([unfiltered.latestId]);
    expect(client.queries.every((q) => q.actionTypes === undefined)).toBe(true);
    expect((await readCheckpoint(store, "all"))?.latestId).toBe(newer[1]!.id);
  });

  it("records a failure, keeps every committed page, and resumes without re-reading finished windows", async () => {
    const store = openStore(":memory:");
    let failAt: number | null = 9;
    const client = new FakeConsoleClient(history(200, 150), {
      beforeRequest: (_q, index) => {
        if (index === failAt) throw new ApiError("connection reset after retries", undefined);
      },
    });
    await expect(runSync(store, client, { ...base, since: "2024-01-15", concurrency: 1 })).rejects.toThrow(
      "connection reset",
    );
    const kept = storedIds(store).length;
    expect(kept).toBeGreaterThan(0);
    expect(runRows(store)[0]).toMatchObject({ outcome: "failed", error: "connection reset after retries" });
    const windows = await readWindows(store, "all");
    const done = windows.filter((w) => w.status === "done");
    expect(done.length).toBeGreaterThan(0);

    failAt = null;
    client.queries.length = 0;
    const summary = await runSync(store, client, { ...base, since: "2024-01-15", concurrency: 1 });
    expect(summary.resumed).toBe(true);
    expect(storedIds(store)).toEqual(client.ids().sort());
    // The resumed plan did not request page 1 of a window finished before the failure.
    const resumedPart = client.queries.filter((q) => q.limit === 10);
    for (const w of done) {
      const again = resumedPart.filter((q) => q.startDate === w.startDate && q.endDate === w.endDate);
      expect(again.filter((q) => q.latestID === undefined && q.page === 1).length).toBeLessThanOrEqual(1);
    }
    expect(runRows(store).map((r) => r.outcome)).toEqual(["failed", "ok"]);
  });

  it("stops on abort: the run is interrupted and the next run finishes the plan", async () => {
    const store = openStore(":memory:");
    const controller = new AbortController();
    const client = new FakeConsoleClient(history(120, 100), {
      beforeRequest: (_q, index) => {
        if (index === 4) controller.abort();
      },
    });
    const summary = await runSync(
      store,
      client,
      { ...base, since: "2024-03-01", concurrency: 1 },
      controller.signal,
    );
    expect(summary.outcome).toBe("interrupted");
    // The summary names the plan's range, not just its end day (issue 26).
    expect(summary.range).toEqual({ since: "2024-03-01", until: "2024-07-01" });
    // The windows it finished, as status counts them (not 0).
    const windowsDone = (await readWindows(store, "all")).filter((w) => w.status !== "pending").length;
    expect(windowsDone).toBeGreaterThan(0);
    expect(summary.windows).toBe(windowsDone);
    expect(runRows(store)[0]?.outcome).toBe("interrupted");
    expect(await readPlan(store, "all")).toBeDefined();
    const requestsAfterAbort = client.queries.length;
    expect(requestsAfterAbort).toBe(5);

    const next = await runSync(store, client, { ...base, concurrency: 1 });
    expect(next.resumed).toBe(true);
    expect(storedIds(store)).toEqual(client.ids().sort());
  });

  it("refuses a second sync while the lease is held and writes nothing", async () => {
    const store = openStore(":memory:");
    await acquireLease(store, "sync", "otherhost/4242/sync", 60_000);
    const client = new FakeConsoleClient(history(5, 2));
    await expect(runSync(store, client, base)).rejects.toBeInstanceOf(LockedError);
    expect(client.queries).toHaveLength(0);
    expect(sqliteOf(store).prepare("SELECT count(*) FROM sync_runs").pluck().get()).toBe(0);
  });

  it("goes on when a lease renewal fails once (the database busy), and finishes ok", async () => {
    const store = openStore(":memory:");
    const sqlite = sqliteOf(store);
    // Every renewal of the lease fails while `failing` (a statement refused, as SQLITE_BUSY would be).
    let failing = false;
    let failures = 0;
    sqlite.function("renewal_fails", () => {
      if (!failing) return 0;
      failures += 1;
      return 1;
    });
    sqlite.exec(`CREATE TEMP TRIGGER renewal_busy BEFORE UPDATE OF expires_at ON leases WHEN renewal_fails()
      BEGIN SELECT RAISE(ABORT, 'database is locked'); END`);
    // The first request waits until a renewal has failed: the run is under way meanwhile.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const client = new (class extends FakeConsoleClient {
      override async listAuditLogs(query: AuditLogQuery, signal?: AbortSignal) {
        if (this.queries.length === 0) await held;
        return super.listAuditLogs(query, signal);
      }
    })(history(30, 3));
    const run = runSync(store, client, { ...base, leaseTtlMs: 1_000 });
    failing = true;
    while (failures === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    failing = false;
    release();

    const summary = await run;
    expect(failures).toBe(1);
    expect(summary.outcome).toBe("ok");
    expect(storedIds(store)).toEqual(client.ids().sort());
    expect(runRows(store).map((r) => r.outcome)).toEqual(["ok"]);
    expect(sqlite.prepare("SELECT count(*) FROM leases").pluck().get()).toBe(0);
  });

  it("re-reads a day whose server total exceeds the local count, and reports days still short", async () => {
    const store = openStore(":memory:");
    const client = new FakeConsoleClient(history(20, 4));
    await runSync(store, client, { ...base, since: "2024-06-25" });
    // A record arrives late, dated two days ago: older than the checkpoint, so latestID skips it.
    const late = NOW - 2 * DAY;
    const lateRecord = makeRecord(late);
    client.add(late, lateRecord);
    const summary = await runSync(store, client, base);
    expect(storedIds(store)).toContain(lateRecord.id);
    expect(summary.coverageGaps).toEqual([]);
    const row = sqliteOf(store)
      .prepare("SELECT server_total, local_count FROM coverage WHERE day = '2024-06-28'")
      .get();
    expect(row).toEqual({ server_total: 6, local_count: 6 }); // five on time, one late

    // The late record cost one count request for the incremental range and a halving down to its day.
    expect(summary.coverageRequests).toBeGreaterThan(1);
    expect(
      client.queries.filter(
        (q) => q.startDate === "2024-06-28" && q.endDate === "2024-06-28" && q.limit !== 1,
      ),
    ).not.toEqual([]);

    // A record the store holds only in quarantine, with no date at all, is not missing: the range that
    // returned it counts it, so it is no gap (and no day is re-read for it).
    const noRepair = new FakeConsoleClient(history(8, 2));
    const other = openStore(":memory:");
    noRepair.add(NOW - DAY, { id: "x".repeat(22) });
    const s2 = await runSync(other, noRepair, { ...base, since: "2024-06-28" });
    expect(s2.quarantined).toBe(1);
    expect(s2.coverageGaps).toEqual([]);
    expect(sqliteOf(other).prepare("SELECT day_min, day_max FROM quarantine").get()).toEqual({
      day_min: "2024-06-28",
      day_max: "2024-07-01",
    });
  });
});

describe("runSync coverage with quarantined and undated records", () => {
  it("counts quarantined records and unreadable times on their day: no false gap, no re-read loop", async () => {
    const store = openStore(":memory:");
    const client = new FakeConsoleClient(history(12, 3));
    const day = "2024-06-29";
    const at = Date.UTC(2024, 5, 29, 9, 0, 0);
    // Fails validation (no name) but its date is readable: it belongs to 2024-06-29.
    const broken = makeRecord(at);
    const { name: _dropped, ...withoutName } = broken;
    client.add(at, withoutName);
    // Valid, but its time text is not a time: occurred_at NULL, still on its date's day.
    const undated = makeRecord(at + 1000, { time: "sometime in the morning" });
    client.add(at + 1000, undated);
    // Counted by the server, unplaceable here (no date at all): a real, explained-nowhere shortfall.
    client.add(at + 2000, { id: "nodate0000000000000001" });

    const first = await runSync(store, client, { ...base, since: "2024-06-27" });
    expect(first.quarantined).toBe(2);
    expect(
      sqliteOf(store).prepare("SELECT server_day FROM audit_logs WHERE id = ?").pluck().get(undated.id),
    ).toBe(day);
    const row = sqliteOf(store)
      .prepare("SELECT server_total, local_count, quarantined_count FROM coverage WHERE day = ?")
      .get(day) as { server_total: number; local_count: number; quarantined_count: number };
    // 1 quarantined with a date + the undated valid one count on their day; the dateless record counts
    // for the range that returned it, so no day is short: every server record is held.
    expect(row.quarantined_count).toBe(1);
    expect(row.local_count).toBe(row.server_total);
    expect(first.coverageGaps).toEqual([]);

    // The next (incremental) run's one count request reaches back over the checked days, so the range
    // holds the dateless record's request range: it matches, and no day is read again, run after run.
    client.queries.length = 0;
    const second = await runSync(store, client, base);
    const dayReads = () =>
      client.queries.filter((q) => q.startDate === day && q.endDate === day && q.limit !== 1);
    expect(dayReads()).toEqual([]);
    expect(second.coverageGaps).toEqual([]);
    expect(second.coverageRequests).toBe(1);
    const third = await runSync(store, client, base);
    expect(dayReads()).toEqual([]);
    expect(third.coverageGaps).toEqual([]);
  });
});

describe("runSync coverage resumes after an interruption", () => {
  it("a run stopped during coverage leaves the unchecked days to the next run, whatever its range", async () => {
    const store = openStore(":memory:");
    const controller = new AbortController();
    let probes = 0;
    let lying = true;
    // The server over-counts March until told otherwise: those windows disagree and coverage halves them.
    const client = new FakeConsoleClient(history(60, 100), {
      adjustTotal: (q, total) => (lying && q.startDate <= "2024-03-31" ? total + 3 : total),
      beforeRequest: (q) => {
        if (q.limit === 1) {
          probes += 1;
          if (probes === 2) controller.abort();
        }
      },
    });
    const first = await runSync(
      store,
      client,
      { ...base, since: "2024-03-01", concurrency: 1 },
      controller.signal,
    );
    expect(first.outcome).toBe("interrupted");
    const pendingAfterKill = await readPendingCoverageDays(store, "all");
    expect(pendingAfterKill.length).toBeGreaterThanOrEqual(30);
    expect(pendingAfterKill[0]).toBe("2024-03-01");

    // The next run is incremental (a few days), yet it finishes the coverage of the whole first range.
    lying = false;
    const second = await runSync(store, client, base);
    expect(second.outcome).toBe("ok");
    const days = sqliteOf(store).prepare("SELECT day FROM coverage ORDER BY day").pluck().all() as string[];
    expect(days[0]).toBe("2024-03-01");
    expect(days.at(-1)).toBe("2024-07-01");
    expect(days).toHaveLength(123); // every day of 2024-03-01 .. 2024-07-01
    expect(await readPendingCoverageDays(store, "all")).toEqual([]);
    expect(second.coverageGaps).toEqual([]);
  });
});

describe("runSync checkpoint without recent activity", () => {
  it("sets the checkpoint from the newest stored record when the newest window is empty", async () => {
    const store = openStore(":memory:");
    // Activity 100 to 40 days ago, none in the newest 30-day window.
    const entries = history(30, 60, NOW - 100 * DAY);
    const client = new FakeConsoleClient(entries);
    await runSync(store, client, { ...base, since: "2024-03-01", coverage: false });
    const newest = entries.at(-1)!.record;
    expect((await readCheckpoint(store, "all"))?.latestId).toBe(newest.id);

    const notices: string[] = [];
    client.queries.length = 0;
    await runSync(store, client, {
      ...base,
      coverage: false,
      onEvent: (e) => {
        if (e.type === "notice") notices.push(e.message);
      },
    });
    expect(notices.join("\n")).not.toContain("No checkpoint");
    expect(client.queries.some((q) => q.latestID === newest.id)).toBe(true);
  });
});

describe("runSync coverage with texts in another zone than the server's days", () => {
  it("counts a record on the day the server lists it under: no false gap, and the report agrees", async () => {
    const store = openStore(":memory:");
    // The fake server files days in UTC. Some records carry texts written in UTC-8: one stamped
    // 2024-06-29 03:00 UTC reads "Fri Jun 28 2024 19:00:00 GMT-0800", so its own date says the 28th.
    const entries = history(40, 6);
    const at = Date.UTC(2024, 5, 29, 3, 0, 0);
    const local = new Date(at - 8 * 3_600_000);
    const shifted = makeRecord(at, {
      date: utcDateText(local.getTime()),
      time: `${utcTimeText(local.getTime()).slice(0, 8)} GMT-0800 (Pacific Standard Time)`,
    });
    const client = new FakeConsoleClient([...entries, { at, record: shifted }]);
    // A one-day range: the record is listed on the 29th, while its own date says the 28th.
    const summary = await runSync(store, client, { ...base, since: "2024-06-29", until: "2024-06-29" });
    expect(
      sqliteOf(store).prepare("SELECT server_day FROM audit_logs WHERE id = ?").pluck().get(shifted.id),
    ).toBe("2024-06-28");
    expect(summary.coverageGaps).toEqual([]);
    expect(
      sqliteOf(store).prepare("SELECT day FROM listed_days WHERE audit_log_id = ?").pluck().get(shifted.id),
    ).toBe("2024-06-29");
    const row = sqliteOf(store)
      .prepare("SELECT server_total, local_count FROM coverage WHERE day = '2024-06-29'")
      .get() as { server_total: number; local_count: number };
    expect(row.local_count).toBe(row.server_total);

    // A wider range later: the 28th and 29th hold what the server lists on them, so no day differs.
    const wider = await runSync(store, client, { ...base, since: "2024-06-25", until: "2024-06-30" });
    expect(wider.coverageGaps).toEqual([]);
    // The report recounts the same way: no gap on either day.
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-zones-"));
    const report = await writeReports({
      store,
      from: "2024-06-28",
      to: "2024-06-29",
      outDir,
      formats: ["md"],
    });
    const markdown = readFileSync(report.files.find((f) => f.path.endsWith(".md"))!.path, "utf8");
    expect(markdown).toContain("**Complete**: all");
  });
});

describe("runSync sticky plans", () => {
  function interruptedStore() {
    const store = openStore(":memory:");
    const controller = new AbortController();
    const client = new FakeConsoleClient(history(300, 100), {
      beforeRequest: (_q, index) => {
        if (index === 6) controller.abort();
      },
    });
    return { store, client, controller };
  }

  it("resumes an interrupted explicit range once: the same range finishes it, nothing is read twice", async () => {
    const { store, client, controller } = interruptedStore();
    const options = { ...base, since: "2024-03-01", concurrency: 1 };
    const first = await runSync(store, client, options, controller.signal);
    expect(first.outcome).toBe("interrupted");
    const storedBefore = storedIds(store).length;
    client.queries.length = 0;
    const second = await runSync(store, client, options);
    expect(second.resumed).toBe(true);
    expect(storedIds(store)).toEqual(client.ids().sort());
    // Every record is fetched once more at most: the plan finished and no second plan re-read the range.
    const pageRecords = client.queries.filter((q) => q.limit === 10).length * 10;
    expect(pageRecords).toBeLessThan(300 - storedBefore + 10 * 10);
    expect(second.fetched).toBeLessThan(300 - storedBefore + 40);
  });

  it("a run naming another range replaces the interrupted plan, says so, and coverage owes its unread days", async () => {
    const { store, client, controller } = interruptedStore();
    await runSync(store, client, { ...base, since: "2024-03-01", concurrency: 1 }, controller.signal);
    const notices: string[] = [];
    const other = await runSync(store, client, {
      ...base,
      since: "2024-06-20",
      onEvent: (e) => {
        if (e.type === "notice") notices.push(e.message);
      },
    });
    expect(other.resumed).toBe(false);
    expect(notices.join("\n")).toMatch(/interrupted sync of 2024-03-01 to 2024-07-01 is replaced/);
    expect(other.range.since).toBe("2024-06-20");
    // The older days it left unread were checked by count and re-read where short: nothing is missing.
    expect(storedIds(store)).toEqual(client.ids().sort());
    expect(other.coverageGaps).toEqual([]);
  });

  it("a run that fails before reading anything (a rejected key) leaves no plan to resume", async () => {
    const store = openStore(":memory:");
    const client = new FakeConsoleClient(history(20, 10), {
      beforeRequest: () => {
        throw new AuthError("The API key was rejected: it is not an active console key.", 401);
      },
    });
    await expect(runSync(store, client, { ...base, since: "2024-06-01" })).rejects.toThrow(AuthError);
    expect(await readPlan(store, "all")).toBeUndefined();
    expect(await readWindows(store, "all")).toEqual([]);
  });
});
