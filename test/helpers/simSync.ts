// Shared pieces of the sync/status integration tests: a simulator on 127.0.0.1, the CLI environment
// pointing at it (fast retries, a rate budget that never waits), and readers of the resulting store.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach } from "vitest";
import { createConsoleClient } from "../../src/api/consoleClient.ts";
import { type RunningSimulator, type SimulatorOptions, startSimulator } from "../../src/simulator/index.ts";
import type { Store } from "../../src/store/open.ts";
import { runSync, type SyncOptions, type SyncSummary } from "../../src/sync/runSync.ts";
import { runCliInProcess } from "./inProcessCli.ts";

export function tempDbPath(prefix = "flagtrail-it-"): string {
  return join(mkdtempSync(join(tmpdir(), prefix)), "flagtrail.db");
}

export function startTestSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  return startSimulator({ host: "127.0.0.1", port: 0, seed: 7, records: 600, days: 120, ...options });
}

/** A small simulator and a store its last 10 days were synced into by the CLI (exit 0 checked). */
export async function syncedTestStore(): Promise<{ sim: RunningSimulator; db: string }> {
  const sim = await startTestSimulator({ records: 200, days: 20, timeZone: "UTC" });
  const db = tempDbPath();
  const sync = await runCliInProcess(["sync", "--since", daysAgo(10), "--quiet"], { env: simEnv(sim, db) });
  if (sync.code !== 0) throw new Error(`the fixture's sync failed: ${sync.stderr}`);
  return { sim, db };
}

/**
 * A simulator and a store synced from it (the last `days` days, no entities), with a config file of
 * `controls` beside it: `env` runs check against them.
 */
export async function syncedWithControls(
  controls: readonly unknown[],
  days = 10,
): Promise<{ sim: RunningSimulator; env: Record<string, string> }> {
  const sim = await startTestSimulator({ records: 200, days: 20, timeZone: "UTC" });
  const db = tempDbPath();
  const config = join(dirname(db), "flagtrail.config.json");
  writeFileSync(config, JSON.stringify({ controls }));
  const env = simEnv(sim, db, { FLAGTRAIL_CONFIG: config });
  const sync = await runCliInProcess(["sync", "--since", daysAgo(days), "--quiet", "--no-entities"], { env });
  if (sync.code !== 0) throw new Error(`the fixture's sync failed: ${sync.stderr}`);
  return { sim, env };
}

/** Environment for `runCli` against `sim`, writing to `db`. */
export function simEnv(
  sim: RunningSimulator,
  db: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    FLAGTRAIL_BASE_URL: sim.url,
    FLAGTRAIL_API_KEY: sim.settings.apiKey,
    FLAGTRAIL_AUTH_HEADER: sim.settings.authHeader,
    FLAGTRAIL_DB: db,
    FLAGTRAIL_RATE_LIMITS: "100000/1000",
    FLAGTRAIL_RETRY_BASE_MS: "5",
    FLAGTRAIL_RETRY_THROTTLED_BASE_MS: "20",
    FLAGTRAIL_RETRY_MAX_DELAY_MS: "200",
    ...extra,
  };
}

/**
 * A copy of the SQLite store at `path` (SQLite's online backup: whole and consistent even with a WAL) in
 * a new temporary directory: one synced store serves the tests that each change their own copy.
 */
export async function copySqliteStore(path: string): Promise<string> {
  const copy = tempDbPath("flagtrail-copy-");
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    await db.backup(copy);
  } finally {
    db.close();
  }
  return copy;
}

/** YYYY-MM-DD of `days` days before now (UTC): older than any record of a `days`-day history. */
export function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

/** Reads the store with a separate read-only connection (safe while a sync runs). */
export function withDb<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 2000");
    return read(db);
  } finally {
    db.close();
  }
}

/** A store killed while it was first being created may have no tables yet: it holds nothing. */
function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

export function storedIds(path: string): string[] {
  return withDb(path, (db) =>
    hasTable(db, "audit_logs")
      ? (db.prepare("SELECT id FROM audit_logs ORDER BY id").pluck().all() as string[])
      : [],
  );
}

export function quarantinedIds(path: string): string[] {
  return withDb(path, (db) =>
    hasTable(db, "quarantine")
      ? (db.prepare("SELECT DISTINCT record_id FROM quarantine ORDER BY record_id").pluck().all() as string[])
      : [],
  );
}

/**
 * Asserts-ready comparison: the ids the store holds (records and quarantined) against the simulator.
 * Ids are unique on both sides, so equal counts plus every stored id known to the simulator means
 * the two sets are equal.
 */
export function compareWithSimulator(sim: RunningSimulator, path: string) {
  const ids = [...storedIds(path), ...quarantinedIds(path)];
  return {
    storeCount: ids.length,
    distinct: new Set(ids).size,
    simulatorCount: sim.control.size(),
    unknownToSimulator: ids.filter((id) => sim.control.get(id) === undefined),
  };
}

export function auditQueries(sim: RunningSimulator): URLSearchParams[] {
  return sim.control
    .counters()
    .lastQueries.map((q) => new URLSearchParams(q.startsWith("?") ? q.slice(1) : q));
}

/**
 * A simulator per test, closed after it: call once at the top of a test file, then
 * `const sim = await startSim({ … })` inside a test.
 */
export function useTestSimulator(): (options?: SimulatorOptions) => Promise<RunningSimulator> {
  let current: RunningSimulator | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return async (options = {}) => {
    current = await startTestSimulator(options);
    return current;
  };
}

/**
 * Runs one sync of `store` in this process against `sim`, with the simulator's request counters reset
 * first: the summary and the requests that really reached the simulator, by "METHOD path".
 */
export async function syncCountingRequests(
  sim: RunningSimulator,
  store: Store,
  options: SyncOptions,
  at: number,
): Promise<{ summary: SyncSummary; requests: Record<string, number> }> {
  const client = createConsoleClient({
    baseUrl: sim.url,
    apiKey: sim.settings.apiKey,
    authHeader: sim.settings.authHeader,
    rateLimits: [{ limit: 1_000_000, windowMs: 1000 }],
    baseDelayMs: 5,
  });
  sim.control.resetCounters();
  try {
    const summary = await runSync(store, client, { now: () => at, ...options });
    return { summary, requests: sim.control.counters().requests };
  } finally {
    await client.close();
  }
}
