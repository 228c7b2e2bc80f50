// Parity of the two engines, proven in-process: the same simulated history synced (runSync, no CLI) into a
// SQLite file and into the real PostgreSQL of the test run reads back the same through every front door of
// the store — status, every report query, verify — and the write-side primitives (leases) behave the same.
// The spawned same-history test (test/pg/sameHistory.test.ts) stays the end-to-end check; this one is fast
// enough to run on every change of a query, and names the query that differs.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readStatus } from "../../src/commands/storeStatus.ts";
import { LockedError } from "../../src/errors.ts";
import { resolvePeriod } from "../../src/report/period.ts";
import {
  REJECTION_ACTION_TYPES,
  REVIEW_EXEMPT_ACTION_TYPES,
  REVIEW_FLOWS,
  REVIEW_WINDOW_MS,
} from "../../src/report/reviews.ts";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.ts";
import { readChainSnapshot } from "../../src/store/chainRead.ts";
import { type EntityChainRow, readEntityChain } from "../../src/store/entityChain.ts";
import { readLease, readLiveLeases } from "../../src/store/leases.ts";
import { inTransaction, queriesOf, sql } from "../../src/store/query.ts";
import {
  QUERIES,
  type ReportParams,
  type ReportQueryName,
  readReportSnapshot,
} from "../../src/store/reportQueries.ts";
import {
  acquireLease,
  backfillRuleDiffs,
  knownShortfalls,
  linkAndDiffConfig,
  openCoverageDays,
  openStore,
  readCoverage,
  readPendingCoverageDays,
  recordEntityFetch,
  releaseLease,
  renewLease,
  type Store,
} from "../../src/store/syncStore.ts";
import { createSyncClient } from "../../src/sync/client.ts";
import { checkedRunStart, localCountForRange, localCountsByDay } from "../../src/sync/coverageCounts.ts";
import {
  storeConfigVersions,
  storeExperimentSnapshots,
  storeMetricSnapshots,
} from "../../src/sync/entityChanges.ts";
import { runSync } from "../../src/sync/runSync.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { freshDatabase } from "../pg/cluster.ts";

// One request at a time: pages fetched concurrently commit in arrival order, and the chain follows it.
// A fixed clock: the history, the sync's "today" and the report's month do not move with the calendar.
const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);

/** One lease as status reads it (readLiveLeases), or undefined. */
const readLiveLease = async (store: Parameters<typeof readLiveLeases>[0], name: string) =>
  (await readLiveLeases(store)).find((l) => l.lease.name === name);
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

/** The October report's parameters, as src/report/reportParts.ts builds them (server days from the store). */
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
    const row = { name, holder: "a", pid: process.pid, acquiredAt: now, expiresAt: now + 60_002 };
    expect(await readLease(store, name)).toEqual(row);
    // Live: on PostgreSQL its lock is held; SQLite judges by expiry against the real clock (NOW is fixed).
    expect(await readLiveLease(store, name)).toMatchObject({ lease: row });
    if (engine === "postgres") expect((await readLiveLease(store, name))?.live).toBe(true);
    expect(await releaseLease(store, name, "b")).toBe(false);
    expect(await readLease(store, name)).toEqual(row);
    expect(await releaseLease(store, name, "a")).toBe(true);
    expect(await readLease(store, name)).toBeUndefined();
    expect((await acquireLease(store, name, "b", 60_000, now + 3)).lease).toMatchObject({ holder: "b" });
    expect(await releaseLease(store, name, "b")).toBe(true);
    // Expiry differs by design: SQLite's lease ends at expires_at, PostgreSQL's with its holder's session
    // (an advisory lock); test/store/leases.test.ts and test/pg/daemon.test.ts cover each.
  });
});

describe("the chain read (verify's) on both engines", () => {
  it("reads the same meta, records with their rule diffs, revisions, quarantine and coverage", async () => {
    const read = (e: Engine) =>
      readChainSnapshot(stores[e], async (reader) => {
        const records = [];
        for await (const r of reader.records()) records.push(r);
        const revisions = [];
        for await (const r of reader.revisions()) revisions.push(r);
        const coverage = [];
        for await (const r of reader.coverage()) coverage.push(r);
        const quarantine = [];
        for await (const r of reader.quarantine()) quarantine.push(r);
        const last = records.at(-1)!;
        return {
          meta: await reader.meta(),
          records,
          revisions,
          coverage,
          quarantine,
          lastHash: await reader.chainHashAt(last.seq),
        };
      });
    const [sqlite, postgres] = await Promise.all(ENGINES.map(read));
    // More than one page (pagesOf reads 1,000 rows at a time), every seq once and in order.
    expect(sqlite!.records.length).toBeGreaterThan(1000);
    expect(sqlite!.records.map((r) => r.seq)).toEqual(sqlite!.records.map((_, i) => i + 1));
    expect(sqlite!.records.some((r) => r.ruleChanges.length > 0)).toBe(true);
    expect(sqlite!.coverage.length).toBeGreaterThan(0);
    expect(sqlite!.lastHash).toBe(sqlite!.records.at(-1)!.chain_hash);
    // PostgreSQL stores the columns copied out of the raw record, and verify compares them with it; on
    // SQLite the engine computes them from the raw record, so the read leaves them out.
    const copied = [
      "name",
      "action_type",
      "change_log",
      "updated_by",
      "updated_by_user_id",
      "modifier_email",
      "date_text",
      "time_text",
      "tags",
    ];
    expect(sqlite!.records.filter((r) => copied.some((k) => k in r))).toEqual([]);
    const copiesOf = (raw: string) => {
      const r = JSON.parse(raw) as Record<string, unknown>;
      const text = (v: unknown) => (typeof v === "string" ? v : null);
      return {
        name: r.name,
        action_type: r.actionType,
        change_log: text(r.changeLog),
        updated_by: text(r.updatedBy),
        updated_by_user_id: text(r.updatedByUserID),
        modifier_email: text(r.modifierEmail),
        date_text: r.date,
        time_text: r.time,
        tags: r.tags === undefined ? null : JSON.stringify(r.tags),
      };
    };
    const pgCopies = postgres!.records.map((r) =>
      Object.fromEntries(copied.map((k) => [k, r[k as keyof typeof r]])),
    );
    expect(pgCopies).toEqual(postgres!.records.map((r) => copiesOf(r.raw)));
    const withoutCopies = postgres!.records.map((r) =>
      Object.fromEntries(Object.entries(r).filter(([k]) => !copied.includes(k))),
    );
    expect({ ...postgres, records: withoutCopies }).toEqual(sqlite);
  });
});

describe("entity writes on both engines", () => {
  const T = NOW - 86_400_000;
  const ctx = { runId: null, now: T };
  const version = (n: number, extra: Record<string, unknown> = {}) => ({
    configId: "cfg1",
    version: n,
    lastModifiedTime: T + n * 1000,
    lastModifierId: "u1",
    lastModifierName: "Alice",
    raw: {
      id: "cfg1",
      name: "parity_config",
      version: n,
      lastModifiedTime: T + n * 1000,
      defaultValue: { limit: n },
      ...extra,
    },
  });
  const experiment = (id: string, status: string) => ({ id, name: `exp ${id}`, status, raw: { id, status } });

  const badRead = {
    kind: "layer_experiments",
    key: "layer2",
    outcome: "ok" as const,
    items: 1,
    invalid: 1,
    invalidItems: [{ raw: { id: "bad" }, issues: [] } as never],
    requestPath: "/layers/x",
  };

  async function write(store: Store) {
    const results = [
      await storeConfigVersions(store, "parity_config", [version(2), version(1)], ctx),
      // A known number with other content: a revision, and a mutation reported.
      await storeConfigVersions(store, "parity_config", [version(1, { description: "changed" })], ctx),
      await storeExperimentSnapshots(
        store,
        "layer1",
        [experiment("x1", "active"), experiment("x2", "active")],
        ctx,
      ),
      // Only x2 changed: one snapshot.
      await storeExperimentSnapshots(
        store,
        "layer1",
        [experiment("x1", "active"), experiment("x2", "stopped")],
        ctx,
      ),
      await storeMetricSnapshots(store, "purchase", [{ id: "m1", raw: { id: "m1" } }], ctx),
      // An ok read with an invalid item, twice: quarantined once, with its fetch row.
      await storeExperimentSnapshots(store, "layer2", [], { ...ctx, read: badRead }),
      await storeExperimentSnapshots(store, "layer2", [], { ...ctx, read: badRead }),
    ];
    await recordEntityFetch(
      store,
      { kind: "config_versions", key: "parity_config", outcome: "ok", items: 2, invalid: 0 },
      ctx,
    );
    await linkAndDiffConfig(store, "parity_config");
    const chain = await readEntityChain(store, async (rows, meta) => {
      const all: (Omit<EntityChainRow, "copied"> & { copied: unknown })[] = [];
      // The copied columns' JSON text differs in spacing by engine: compared parsed.
      for await (const row of rows) all.push({ ...row, copied: JSON.parse(row.copied) });
      return { all, metaHead: meta.head };
    });
    const derived = await inTransaction(store, async (q) => ({
      changes: await q.all(
        sql`SELECT config_key, version, previous_version, field, path, change, old_value, new_value
            FROM config_version_changes ORDER BY id`,
      ),
      fetches: await q.all(
        sql`SELECT kind, entity_key, outcome, items, invalid, audit_seq FROM entity_fetches ORDER BY id`,
      ),
      quarantined: await q.all(sql`SELECT record_id, request_path FROM quarantine`),
    }));
    return { results, chain, derived };
  }

  it("stores the same rows, entity_seq and chain hashes, and the same derived rows", async () => {
    const [sqlite, postgres] = [await write(stores.sqlite), await write(stores.postgres)];
    expect(sqlite.results).toEqual([
      { inserted: 2, mutations: [] },
      { inserted: 0, mutations: [expect.objectContaining({ configKey: "parity_config", version: 1 })] },
      2,
      1,
      1,
      0,
      0,
    ]);
    expect(sqlite.derived.quarantined).toEqual([{ record_id: "bad", request_path: "/layers/x" }]);
    expect(sqlite.derived.fetches.map((f) => (f as { entity_key: string }).entity_key)).toEqual([
      "layer2",
      "layer2",
      "parity_config",
    ]);
    expect(sqlite.chain.all.map((r) => [r.tbl, r.entity_seq])).toEqual([
      ["config_versions", 1],
      ["config_versions", 2],
      ["config_version_revisions", 3],
      ["experiment_snapshots", 4],
      ["experiment_snapshots", 5],
      ["experiment_snapshots", 6],
      ["metric_snapshots", 7],
    ]);
    expect(JSON.parse(sqlite.chain.metaHead!)).toEqual({
      seq: 7,
      hash: sqlite.chain.all.at(-1)!.entity_chain_hash,
    });
    expect(sqlite.derived.changes.length).toBeGreaterThan(0);
    expect(postgres).toEqual(sqlite);
  });
});

describe("coverage reads on both engines", () => {
  it("count the same records per server day and find the same checked days", async () => {
    const read = async (e: Engine) => {
      const store = stores[e];
      const byDay = await localCountsByDay(store, "2026-08-01", "2026-11-20", []);
      const someDay = [...byDay.keys()][10]!;
      return {
        byDay: [...byDay.entries()],
        range: await localCountForRange(store, "2026-08-01", "2026-11-20", []),
        typed: await localCountForRange(store, "2026-08-01", "2026-11-20", ["gate_update"]),
        coverage: await readCoverage(store, "all", someDay),
        open: await openCoverageDays(store, "all"),
        shortfalls: [...(await knownShortfalls(store, "all", "2026-08-01", "2026-11-20")).entries()],
        runStart: await checkedRunStart(store, "all", "2026-11-20"),
        pending: await readPendingCoverageDays(store, "all"),
      };
    };
    const [sqlite, postgres] = await Promise.all(ENGINES.map(read));
    expect(sqlite!.byDay.length).toBeGreaterThan(50);
    expect(sqlite!.range).toBeGreaterThan(1000);
    expect(sqlite!.range).toBe(sqlite!.byDay.reduce((n, [, c]) => n + c.held, 0));
    expect(sqlite!.runStart < "2026-11-20").toBe(true);
    expect(postgres).toEqual(sqlite);
  });
});

// Last in the file: it rewrites the stores' rule diffs (the same rows again, under new ids).
describe("the rule-diff backfill on both engines", () => {
  const diffRows = async (store: Store) => {
    const q = await queriesOf(store);
    return {
      changes: normalised(
        await q.all(sql`SELECT audit_log_id, rule_id, rule_name, change, field, old_value, new_value,
          old_position, new_position FROM rule_changes ORDER BY id`),
      ),
      summaries: normalised(
        await q.all(sql`SELECT audit_log_id, summary, diff_version FROM rule_diff_summaries
          ORDER BY audit_log_id COLLATE "binary"`),
      ),
    };
  };
  it("rediffs records with an older or no diff into the same rows, once", async () => {
    const run = async (e: Engine) => {
      const store = stores[e];
      const synced = await diffRows(store);
      const [first, second] = synced.summaries.map((s) => s.audit_log_id as string);
      await inTransaction(store, async (q) => {
        // An older DIFF_VERSION on one record, no diff at all on another.
        await q.run(sql`UPDATE rule_diff_summaries SET diff_version = 0 WHERE audit_log_id = ${first}`);
        await q.run(sql`DELETE FROM rule_changes WHERE audit_log_id = ${second}`);
        await q.run(sql`DELETE FROM rule_diff_summaries WHERE audit_log_id = ${second}`);
      });
      const incremental = await backfillRuleDiffs(store, { batchSize: 400 });
      const full = await backfillRuleDiffs(store, { full: true, batchSize: 400 });
      const again = await backfillRuleDiffs(store, { full: true });
      const rows = await diffRows(store);
      const byRecord = (r: typeof rows) =>
        [...r.changes].sort((a, b) => String(a.audit_log_id).localeCompare(String(b.audit_log_id)));
      return {
        incremental,
        full,
        again,
        rows,
        same: JSON.stringify(byRecord(rows)) === JSON.stringify(byRecord(synced)),
        summariesSame: JSON.stringify(rows.summaries) === JSON.stringify(synced.summaries),
      };
    };
    const sqlite = await run("sqlite");
    const postgres = await run("postgres");
    // The sync diffed every record as it stored it and moved the mark: nothing after it.
    expect(sqlite.incremental).toEqual({ diffed: 0, scanned: 0 });
    expect(sqlite.full.diffed).toBe(2);
    expect(sqlite.full.scanned).toBeGreaterThan(1000);
    expect(sqlite.again).toEqual({ diffed: 0, scanned: sqlite.full.scanned });
    expect(sqlite.rows.changes.length).toBeGreaterThan(0);
    expect(sqlite.same).toBe(true);
    expect(sqlite.summariesSame).toBe(true);
    expect(postgres).toEqual(sqlite);
  });
});
