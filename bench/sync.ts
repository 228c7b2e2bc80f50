// Sync benchmark: the in-process simulator (no faults, no rate limit) serves a history; the same
// windows are read twice, once by the console client alone (fetch-only, nothing stored) and once by
// runSync into a temp file store. Their time ratio is what storing costs on top of fetching.
// Then writePage per 1000 records against a bare prepared INSERT of the same rows.
import { createConsoleClient } from "../src/api/consoleClient.ts";
import { startSimulator } from "../src/simulator/index.ts";
import { addDays, todayUtc } from "../src/sync/days.ts";
import { type PlannedWindow, planWindows } from "../src/sync/plan.ts";
import { runPool } from "../src/sync/pool.ts";
import { runSync, SYNC_DEFAULTS } from "../src/sync/runSync.ts";
import { measureBareInsert, measureWritePage, simulatedRecords, tempStore } from "./writeRecords.ts";

const RECORDS = Number(process.env.BENCH_SYNC_RECORDS ?? 50_000);
const WRITE_RECORDS = Number(process.env.BENCH_WRITE_RECORDS ?? 20_000);
const DAYS = 120;
const NOW = Date.UTC(2024, 3, 15, 19);
const PAGE_SIZE = SYNC_DEFAULTS.preferredPageSize;
const CONCURRENCY = SYNC_DEFAULTS.concurrency;
const WINDOW_DAYS = SYNC_DEFAULTS.windowDays;
// Two days of margin: the server's days are Pacific, the range is computed in UTC.
const UNTIL = addDays(todayUtc(NOW), 1);
const SINCE = addDays(todayUtc(NOW), -(DAYS + 2));
/** The benchmark measures throughput, not the rate budget: lift it. */
const NO_RATE_LIMIT = [{ limit: 1e9, windowMs: 1000 }];

function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function clientFor(url: string, apiKey: string) {
  return createConsoleClient({ baseUrl: url, apiKey, rateLimits: NO_RATE_LIMIT });
}

/** Reads every page of every window the way runSync does (same stop rule, same concurrency). */
async function fetchOnly(
  url: string,
  apiKey: string,
  windows: readonly PlannedWindow[],
  firstPageOnly = false,
): Promise<{ records: number; requests: number; ms: number }> {
  const client = clientFor(url, apiKey);
  let records = 0;
  const started = performance.now();
  try {
    await runPool(windows, CONCURRENCY, async (window, signal) => {
      for (let page = 1; ; page += 1) {
        const response = await client.listAuditLogs(
          { startDate: window.startDate, endDate: window.endDate, page, limit: PAGE_SIZE, sortOrder: "desc" },
          signal,
        );
        const count = response.records.length;
        records += count;
        const perPage = response.pagination.itemsPerPage > 0 ? response.pagination.itemsPerPage : PAGE_SIZE;
        if (
          firstPageOnly ||
          count === 0 ||
          count < perPage ||
          page * perPage >= response.pagination.totalItems
        ) {
          break;
        }
      }
    });
    return { records, requests: client.stats().requests, ms: performance.now() - started };
  } finally {
    await client.close();
  }
}

async function syncOnce(url: string, apiKey: string) {
  const client = clientFor(url, apiKey);
  const temp = tempStore("sync");
  try {
    const started = performance.now();
    const summary = await runSync(temp.store, client, {
      since: SINCE,
      until: UNTIL,
      pageSize: PAGE_SIZE,
      concurrency: CONCURRENCY,
      windowDays: WINDOW_DAYS,
      coverage: false,
    });
    const ms = performance.now() - started;
    if (summary.outcome !== "ok" || summary.inserted !== RECORDS || summary.quarantined !== 0) {
      throw new Error(
        `bench sync: outcome ${summary.outcome}, inserted ${summary.inserted} of ${RECORDS}, quarantined ${summary.quarantined}`,
      );
    }
    return { fetched: summary.fetched, inserted: summary.inserted, requests: summary.requests, ms };
  } finally {
    temp.done();
    await client.close();
  }
}

export async function benchSync(): Promise<Record<string, number>> {
  const rssStartMb = process.memoryUsage().rss / 2 ** 20;
  const sim = await startSimulator({ records: RECORDS, days: DAYS, seed: 1, now: NOW });
  const figures: Record<string, number> = {};
  try {
    const { url } = sim;
    const { apiKey } = sim.settings;
    const windows = planWindows(SINCE, UNTIL, WINDOW_DAYS);

    // Warm-up: the simulator builds each window's list on first use; neither side should pay it.
    await fetchOnly(url, apiKey, windows, true);
    // The fetch-only baseline runs before and after the sync; its mean brackets the sync's run.
    collectGarbage();
    const fetchBefore = await fetchOnly(url, apiKey, windows);
    collectGarbage();
    const sync = await syncOnce(url, apiKey);
    collectGarbage();
    const fetchAfter = await fetchOnly(url, apiKey, windows);
    if (fetchBefore.records !== sync.fetched || fetchAfter.records !== sync.fetched) {
      throw new Error(
        `bench sync: fetch-only read ${fetchBefore.records}/${fetchAfter.records} records, the sync ${sync.fetched}`,
      );
    }
    const fetchMs = (fetchBefore.ms + fetchAfter.ms) / 2;
    Object.assign(figures, {
      sync_records_in_history: RECORDS,
      sync_records_fetched: sync.fetched,
      sync_requests: sync.requests,
      fetch_only_ms: Math.round(fetchMs),
      sync_ms: Math.round(sync.ms),
      fetch_only_records_per_s: Math.round((sync.fetched / fetchMs) * 1000),
      sync_records_per_s: Math.round((sync.fetched / sync.ms) * 1000),
      sync_vs_fetch_only_time_ratio: sync.ms / fetchMs,
    });
  } finally {
    await sim.close();
  }

  // writePage against a bare INSERT of the same rows; two rounds, the faster of each (noise only adds).
  const records = simulatedRecords(WRITE_RECORDS);
  collectGarbage();
  let writeMs = Number.POSITIVE_INFINITY;
  let bareMs = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 2; round += 1) {
    writeMs = Math.min(writeMs, measureWritePage(records));
    collectGarbage();
    bareMs = Math.min(bareMs, measureBareInsert(records));
    collectGarbage();
  }
  Object.assign(figures, {
    write_page_ms_per_1000: writeMs,
    bare_insert_ms_per_1000: bareMs,
    write_page_vs_bare_insert_ratio: writeMs / bareMs,
    sync_rss_start_mb: Math.round(rssStartMb),
    // maxRSS (KiB) is this process's peak: the in-process simulator's history is included.
    sync_peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  });
  return figures;
}
