// Sync benchmarks, each figure beside its baseline measured in the same run (issue 14's table):
// - ingest: a sync into an empty store vs. fetching the same pages alone (same pager, concurrency and
//   page size, nothing stored), the simulator in its own process; records/s of both; and vs.
//   sqlite-utils and a raw executemany on the same JSON (medians of three alternating rounds).
// - memory: peak RSS of `flagtrail sync` (the compiled CLI, as users run it) of a small and of a large
//   history, each in a process of its own.
// - latency: a backfill at 150 ms per request with concurrency 8 vs. a sequential pager.
// - requests: a three-year backfill (pages, coverage requests) and a nightly run of 250 records, exact,
//   without entities and with them (over a complete entity history: the backlog drained first).
// - write path: a page through the record writer vs. a bare INSERT of the same rows.
// - first sync: requests and wall time at the documented limits of a 20k and a 100k history, without an
//   entity budget vs. with the default one and the default rate share (bench/firstSync.ts).
// BENCH_SCALE=full (npm run bench -- --scale full) uses 1,000,000 records where the default uses fewer.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { z } from "zod";
import { createConsoleClient } from "../src/api/consoleClient.ts";
import { readPages } from "../src/api/pager.ts";
import { addDays } from "../src/sync/days.ts";
import { planWindows } from "../src/sync/plan.ts";
import { runPool } from "../src/sync/pool.ts";
import { runSync } from "../src/sync/runSync.ts";
import { baselineIngest } from "./baselines.ts";
import { buildDist, compiledEnv, maxRssMb, median, PRINT_MAX_RSS } from "./compiled.ts";
import { firstSyncFigures } from "./firstSync.ts";
import { bareInsertMs, copyMs, migrateMs, startBenchPg } from "./pgIngest.ts";
import { SIM_KEY, type SimProcess, startSimProcess } from "./simProcess.ts";
import { measureBareInsert, measureWritePage, simulatedRecords, tempStore } from "./writeRecords.ts";

const FULL = process.env.BENCH_SCALE === "full";
const INGEST_RECORDS = FULL ? 1_000_000 : 50_000;
const SMALL_RECORDS = 10_000;
const NOW = Date.UTC(2026, 10, 20, 20, 0, 0);
const TODAY = "2026-11-20";
const UNTIL = addDays(TODAY, 1);
const NO_RATE_LIMIT = [{ limit: 1e9, windowMs: 1000 }];
const run = promisify(execFile);
const BIN = fileURLToPath(new URL("../bin/flagtrail.js", import.meta.url));

const simFlags = (records: number, days: number, extra: string[] = []) => [
  "--records",
  String(records),
  "--days",
  String(days),
  "--seed",
  "1",
  "--now",
  String(NOW),
  ...extra,
];
const clientFor = (sim: SimProcess) =>
  createConsoleClient({ baseUrl: sim.url, apiKey: SIM_KEY, rateLimits: NO_RATE_LIMIT });

/** Every page of every window through the sync's own pager, nothing stored (`keep`: the records by id). */
async function fetchOnly(
  sim: SimProcess,
  since: string,
  options: { concurrency: number; limit: number; keep?: Map<string, unknown> },
) {
  const client = clientFor(sim);
  let records = 0;
  const started = performance.now();
  try {
    await runPool(planWindows(since, UNTIL, 30), options.concurrency, async (window) => {
      const query = { startDate: window.startDate, endDate: window.endDate, sortOrder: "desc" as const };
      for await (const page of readPages(client, query, {
        limit: options.limit,
        prefetch: options.concurrency,
      })) {
        records += page.records.length;
        for (const record of options.keep === undefined ? [] : page.records)
          options.keep?.set((record as { id: string }).id, record);
      }
    });
    return { records, ms: performance.now() - started, requests: client.stats().requests };
  } finally {
    await client.close();
  }
}

interface ChildSync {
  ms: number;
  inserted: number;
  fetched: number;
  requests: number;
  coverageRequests: number;
  gaps: number;
  rssMb: number;
  /** Size of the SQLite store (file and WAL) after the sync; 0 for PostgreSQL. */
  bytes: number;
}

const summarySchema = z.looseObject({
  inserted: z.number(),
  fetched: z.number(),
  requests: z.number(),
  coverageRequests: z.number(),
  coverageGaps: z.array(z.unknown()),
});

/**
 * `flagtrail sync` as users run it (compiled dist/, its own process) into a fresh store (a temp file, or
 * the PostgreSQL database `db`); its peak RSS.
 */
async function syncInChild(sim: SimProcess, since: string, db?: string): Promise<ChildSync> {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-bench-sync-"));
  try {
    const args = ["--import", PRINT_MAX_RSS, BIN, "sync", "--db", db ?? join(dir, "bench.db")];
    // The audit log only: fetch-only reads no entity history either.
    args.push(
      "--base-url",
      sim.url,
      "--since",
      since,
      "--until",
      UNTIL,
      "--no-entities",
      "--json",
      "--quiet",
    );
    const started = performance.now();
    const { stdout, stderr } = await run(process.execPath, args, {
      maxBuffer: 1 << 24,
      env: compiledEnv({ FLAGTRAIL_API_KEY: SIM_KEY, FLAGTRAIL_RATE_LIMITS: "1000000000/1000" }),
    });
    const ms = performance.now() - started;
    const summary = summarySchema.parse(JSON.parse(stdout));
    const file = join(dir, "bench.db");
    const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);
    return {
      ms,
      inserted: summary.inserted,
      fetched: summary.fetched,
      requests: summary.requests,
      coverageRequests: summary.coverageRequests,
      gaps: summary.coverageGaps.length,
      rssMb: maxRssMb(stderr),
      bytes: db === undefined ? size(file) + size(`${file}-wal`) : 0,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function ingestAndMemory(figures: Record<string, number>) {
  const since = addDays(TODAY, -402);
  const sim = await startSimProcess(simFlags(INGEST_RECORDS, 400));
  try {
    // Warm-up (the simulator builds its lists), keeping the records for the baselines.
    const records = new Map<string, unknown>();
    await fetchOnly(sim, since, { concurrency: 4, limit: 1000, keep: records });
    const fetched = await fetchOnly(sim, since, { concurrency: 4, limit: 1000 });
    // Three rounds of the sync and the baselines, alternating which goes first (on a loaded 2-core
    // machine the first of a pair ran faster), each figure the median of its three.
    const syncs: ChildSync[] = [];
    const rounds: Record<string, number>[] = [];
    for (let round = 0; round < (FULL ? 1 : 3); round++) {
      if (round % 2 === 1) rounds.push(await baselineRound([...records.values()]));
      syncs.push(await syncInChild(sim, since));
      if (round % 2 === 0) rounds.push(await baselineRound([...records.values()]));
    }
    const sync = median(syncs);
    // Adjacent windows share a day: both sides read those records twice.
    if (
      sync.inserted !== INGEST_RECORDS ||
      records.size !== INGEST_RECORDS ||
      fetched.records !== sync.fetched ||
      sync.gaps !== 0
    ) {
      throw new Error(
        `bench ingest: fetch-only read ${fetched.records}, the sync ${sync.fetched}, stored ${sync.inserted} of ${INGEST_RECORDS}`,
      );
    }
    Object.assign(figures, {
      ingest_records: INGEST_RECORDS,
      ingest_fetch_only_records_per_s: Math.round((fetched.records / fetched.ms) * 1000),
      ingest_sync_records_per_s: Math.round((sync.fetched / sync.ms) * 1000),
      ingest_sync_vs_fetch_only_speed_ratio: fetched.ms / sync.ms,
      ingest_sync_requests: sync.requests,
      ingest_peak_rss_mb: Math.round(sync.rssMb),
      ingest_sync_bytes_per_record: Math.round(sync.bytes / INGEST_RECORDS),
    });
    // Against the baselines: records stored per second (they store each distinct record once).
    const storedPerS = Math.round((sync.inserted / sync.ms) * 1000);
    figures.ingest_sync_stored_records_per_s = storedPerS;
    Object.assign(figures, baselineMedians(rounds, storedPerS));
    Object.assign(figures, await pgIngest(sim, since));
  } finally {
    await sim.close();
  }
  const small = await startSimProcess(simFlags(SMALL_RECORDS, 400));
  try {
    const sync = await syncInChild(small, since);
    Object.assign(figures, {
      small_sync_records: SMALL_RECORDS,
      small_sync_peak_rss_mb: Math.round(sync.rssMb),
      large_vs_small_peak_rss_ratio: (figures.ingest_peak_rss_mb ?? 0) / sync.rssMb,
    });
  } finally {
    await small.close();
  }
}

/** sqlite-utils and a raw executemany on the same JSON (bench/baselines.ts), into files of their own. */
async function baselineRound(records: unknown[]): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-bench-baselines-"));
  try {
    return await baselineIngest(records, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each baseline figure's median over the rounds, and the sync's speed over theirs. */
function baselineMedians(rounds: Record<string, number>[], syncPerS: number): Record<string, number> {
  const figures: Record<string, number> = {};
  for (const key of Object.keys(rounds[0] ?? {})) {
    const values = rounds.map((round) => round[key] ?? 0).sort((a, b) => a - b);
    figures[key] = values[Math.floor(values.length / 2)]!;
  }
  const utils = figures.ingest_sqlite_utils_records_per_s;
  const many = figures.ingest_executemany_records_per_s;
  if (utils !== undefined) figures.ingest_sync_vs_sqlite_utils_speed_ratio = syncPerS / utils;
  if (many !== undefined) figures.ingest_sync_vs_executemany_speed_ratio = syncPerS / many;
  return figures;
}

/**
 * The same ingest into PostgreSQL, beside a bare multi-row INSERT and a server-side COPY of the rows it
 * stored (bench/pgIngest.ts). Three rounds, each into fresh databases, alternating which goes first; each
 * figure the median of its three: one COPY of 50k rows took anywhere from 2.3 to 8.6 s on a loaded
 * 2-core machine, so a single pair said more about the machine than about the sync.
 */
async function pgIngest(sim: SimProcess, since: string): Promise<Record<string, number>> {
  const server = await startBenchPg();
  try {
    const syncs: ChildSync[] = [];
    const copies: { ms: number; rows: number }[] = [];
    const bares: { ms: number; rows: number }[] = [];
    const schemas: number[] = [];
    for (let round = 0; round < (FULL ? 1 : 3); round++) {
      const url = await server.database(`bench_sync_${round}`);
      schemas.push(await migrateMs(url));
      const copy = async () => copies.push(await copyMs(url, await server.database(`bench_copy_${round}`)));
      const sync = await syncInChild(sim, since, url);
      if (sync.inserted !== INGEST_RECORDS) {
        throw new Error(`bench PostgreSQL ingest: stored ${sync.inserted} of ${INGEST_RECORDS}`);
      }
      if (round % 2 === 1) await copy();
      syncs.push(sync);
      bares.push(await bareInsertMs(url, await server.database(`bench_bare_${round}`)));
      if (round % 2 === 0) await copy();
    }
    const sync = median(syncs);
    const copy = median(copies);
    const bare = median(bares);
    if (copy.rows !== INGEST_RECORDS) throw new Error(`bench PostgreSQL COPY: ${copy.rows} rows`);
    const syncPerS = (sync.fetched / sync.ms) * 1000;
    const barePerS = (bare.rows / bare.ms) * 1000;
    const copyPerS = (copy.rows / copy.ms) * 1000;
    return {
      sync_pg_copy_records_per_s: Math.round(copyPerS),
      sync_pg_ingest_vs_copy_speed_ratio: ((sync.inserted / sync.ms) * 1000) / copyPerS,
      sync_pg_ingest_records_per_s: Math.round(syncPerS),
      sync_pg_bare_insert_records_per_s: Math.round(barePerS),
      sync_pg_ingest_vs_bare_insert_speed_ratio: syncPerS / barePerS,
      sync_pg_server_major_version: Number.parseInt(server.version, 10),
      // Made before the sync's clock starts, as for the COPY and the INSERT (a user's first sync pays it once).
      sync_pg_schema_ms: Math.round(median(schemas.map((ms) => ({ ms }))).ms),
    };
  } finally {
    await server.stop();
  }
}

async function latency(figures: Record<string, number>) {
  const since = addDays(TODAY, -122);
  const sim = await startSimProcess(simFlags(10_000, 120, ["--latency", "150"]));
  try {
    const sequential = await fetchOnly(sim, since, { concurrency: 1, limit: 100 });
    const client = clientFor(sim);
    const temp = tempStore("latency");
    try {
      const started = performance.now();
      const summary = await runSync(temp.store, client, {
        since,
        until: UNTIL,
        pageSize: 100,
        concurrency: 8,
        entities: false, // the sequential pager reads the audit log only
      });
      const ms = performance.now() - started;
      Object.assign(figures, {
        latency_150ms_sequential_pager_ms: Math.round(sequential.ms),
        latency_150ms_sync_concurrency_8_ms: Math.round(ms),
        latency_150ms_sync_vs_sequential_speed_ratio: sequential.ms / ms,
        latency_150ms_sequential_requests: sequential.requests,
        latency_150ms_sync_requests: summary.requests,
      });
    } finally {
      temp.done();
      await client.close();
    }
  } finally {
    await sim.close();
  }
}

async function requestCounts(figures: Record<string, number>) {
  const since = "2024-01-01";
  const sim = await startSimProcess(simFlags(30_000, 1050));
  const client = clientFor(sim);
  const temp = tempStore("requests");
  try {
    // Audit-log requests: entity history is measured on its own below.
    const audit = { entities: false } as const;
    const backfill = await runSync(temp.store, client, { since, until: UNTIL, now: () => NOW, ...audit });
    const pages = backfill.requests - backfill.coverageRequests;
    // A nightly run: 250 new records at the head of the list (stamped with the simulator's clock).
    await sim.append(Array.from({ length: 250 }, (_, i) => ({ name: `n${i}`, actionType: "gate_update" })));
    await sim.resetCounters();
    await runSync(temp.store, client, { pageSize: 100, now: () => NOW + 60_000, ...audit });
    const nightlyRequests = await sim.auditRequests();
    // And one where the 250 arrive late, back-dated a day: the count finds them, halving finds their day.
    await sim.append(
      Array.from({ length: 250 }, (_, i) => ({
        at: NOW - 86_400_000 + i * 1000,
        name: `l${i}`,
        actionType: "gate_update",
      })),
    );
    await sim.resetCounters();
    const late = await runSync(temp.store, client, { pageSize: 100, now: () => NOW + 120_000, ...audit });
    if (late.inserted !== 250 || late.coverageGaps.length > 0)
      throw new Error("bench: late records not all found");
    Object.assign(figures, {
      backfill_3y_records: backfill.inserted,
      backfill_3y_page_requests: pages,
      backfill_3y_coverage_requests: backfill.coverageRequests,
      backfill_3y_coverage_vs_pages_ratio: backfill.coverageRequests / pages,
      nightly_250_records_requests: nightlyRequests,
      nightly_250_bar_requests: Math.ceil(250 / 100) + 2,
      nightly_250_late_records_requests: await sim.auditRequests(),
    });
    // The first entity pass over the same store (config versions, layer experiments) within the default
    // budget, the backlog drained on demand, then a nightly run with entities on: 250 generated records
    // (config edits, experiment changes… as in the history), every request counted (audit + entity).
    const entityPass = await runSync(temp.store, client, { pageSize: 100, now: () => NOW + 180_000 });
    const drain = await runSync(temp.store, client, { entitiesOnly: true, now: () => NOW + 240_000 });
    if (drain.entities?.pending !== 0) throw new Error("bench: the entity backlog did not drain");
    await sim.headInsert(250);
    await sim.resetCounters();
    const entityNightly = await runSync(temp.store, client, { pageSize: 100, now: () => NOW + 300_000 });
    Object.assign(figures, {
      entity_first_pass_requests: entityPass.entities?.requests ?? -1,
      entity_backlog_drain_requests: drain.entities?.requests ?? -1,
      entity_nightly_requests: entityNightly.entities?.requests ?? -1,
      entity_nightly_configs: entityNightly.entities?.configs ?? -1,
      entity_nightly_layers: entityNightly.entities?.layers ?? -1,
      nightly_250_entities_on_requests: await sim.requests(),
      nightly_250_entities_on_bar_requests: Math.ceil(250 / 100) + 3,
    });
  } finally {
    temp.done();
    await client.close();
    await sim.close();
  }
}

export async function benchSync(): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  buildDist(); // the ingest and memory figures run the compiled CLI
  await requestCounts(figures);
  for (const records of [20_000, 100_000]) {
    Object.assign(
      figures,
      await firstSyncFigures(records, simFlags, clientFor, { today: TODAY, until: UNTIL, now: NOW }),
    );
  }
  await latency(figures);
  await ingestAndMemory(figures);
  // The record writer against a bare INSERT of the same rows; two rounds, the faster of each.
  const records = simulatedRecords(20_000);
  let writeMs = Number.POSITIVE_INFINITY;
  let bareMs = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 2; round += 1) {
    writeMs = Math.min(writeMs, await measureWritePage(records));
    bareMs = Math.min(bareMs, measureBareInsert(records));
  }
  Object.assign(figures, {
    write_page_ms_per_1000: writeMs,
    bare_insert_ms_per_1000: bareMs,
    write_page_vs_bare_insert_ratio: writeMs / bareMs,
  });
  return figures;
}
