// Bookkeeping of syncs in the store: run rows, per-filter-set checkpoints, the current plan and its
// window progress, coverage. Functions that advance progress are meant to run inside the page
// transaction (see writes.ts), so that rows and progress commit together.

import { z } from "zod";
import { sqliteOf } from "./connection.ts";
import type { Store } from "./open.ts";
import type { PageCounts } from "./writes.ts";

// ---- sync runs -------------------------------------------------------------------------------------

export type RunOutcome = "running" | "ok" | "failed" | "interrupted";

export interface RunCounters extends PageCounts {
  requests: number;
  throttled: number;
  /** Requests sent again after a failed attempt. */
  retries: number;
}

export function startRun(
  store: Store,
  run: { filterKey: string; params: Record<string, unknown>; now: number },
): number {
  const info = sqliteOf(store)
    .prepare(
      "INSERT INTO sync_runs (started_at, outcome, filter_key, params, pid) VALUES (?, 'running', ?, ?, ?)",
    )
    .run(run.now, run.filterKey, JSON.stringify(run.params), process.pid);
  return Number(info.lastInsertRowid);
}

export function updateRunCounters(store: Store, runId: number, counters: RunCounters): void {
  sqliteOf(store)
    .prepare(
      `UPDATE sync_runs SET fetched = ?, inserted = ?, duplicates = ?, mutations = ?, quarantined = ?,
         warnings = ?, requests = ?, throttled = ?, retries = ? WHERE id = ?`,
    )
    .run(
      counters.fetched,
      counters.inserted,
      counters.duplicates,
      counters.mutations,
      counters.quarantined,
      counters.warnings,
      counters.requests,
      counters.throttled,
      counters.retries,
      runId,
    );
}

export function finishRun(
  store: Store,
  runId: number,
  outcome: Exclude<RunOutcome, "running">,
  counters: RunCounters,
  error: string | null,
  now: number,
): void {
  updateRunCounters(store, runId, counters);
  sqliteOf(store)
    .prepare("UPDATE sync_runs SET outcome = ?, finished_at = ?, error = ? WHERE id = ?")
    .run(outcome, now, error, runId);
}

/**
 * Runs still marked `running` while we hold the sync lease belong to processes that died (kill -9,
 * power loss): mark them interrupted so that status tells the truth.
 */
export function markOrphanRunsInterrupted(store: Store, now: number): number {
  return sqliteOf(store)
    .prepare(
      `UPDATE sync_runs SET outcome = 'interrupted', finished_at = ?,
         error = coalesce(error, 'the process ended before the run finished')
       WHERE outcome = 'running'`,
    )
    .run(now).changes;
}

// ---- checkpoints -----------------------------------------------------------------------------------

export interface Checkpoint {
  filterKey: string;
  latestId: string;
  latestOccurredAt: number | null;
  /** The checkpoint record's server day, when the record is stored and its date parsed. */
  serverDay: string | null;
  updatedAt: number;
}

export function readCheckpoint(store: Store, filterKey: string): Checkpoint | undefined {
  const row = sqliteOf(store)
    .prepare<
      [string],
      {
        filter_key: string;
        latest_id: string;
        latest_occurred_at: number | null;
        updated_at: number;
        server_day: string | null;
      }
    >(
      `SELECT c.filter_key, c.latest_id, c.latest_occurred_at, c.updated_at, a.server_day
       FROM checkpoints c LEFT JOIN audit_logs a ON a.id = c.latest_id WHERE c.filter_key = ?`,
    )
    .get(filterKey);
  if (!row) return undefined;
  return {
    filterKey: row.filter_key,
    latestId: row.latest_id,
    latestOccurredAt: row.latest_occurred_at,
    serverDay: row.server_day,
    updatedAt: row.updated_at,
  };
}

export function listCheckpoints(store: Store): Checkpoint[] {
  const keys = sqliteOf(store)
    .prepare<[], string>("SELECT filter_key FROM checkpoints ORDER BY filter_key")
    .pluck();
  return keys
    .all()
    .map((key) => readCheckpoint(store, key))
    .filter((c): c is Checkpoint => c !== undefined);
}

export function writeCheckpoint(
  store: Store,
  checkpoint: {
    filterKey: string;
    latestId: string;
    latestOccurredAt: number | null;
    runId: number;
    now: number;
  },
): void {
  sqliteOf(store)
    .prepare(
      `INSERT INTO checkpoints (filter_key, latest_id, latest_occurred_at, updated_at, sync_run_id)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(filter_key) DO UPDATE SET latest_id = excluded.latest_id,
         latest_occurred_at = excluded.latest_occurred_at, updated_at = excluded.updated_at,
         sync_run_id = excluded.sync_run_id`,
    )
    .run(
      checkpoint.filterKey,
      checkpoint.latestId,
      checkpoint.latestOccurredAt,
      checkpoint.now,
      checkpoint.runId,
    );
}

/**
 * The newest stored record of a server-day range and filter set: the checkpoint of a finished plan whose
 * newest window held no (valid) record on its first page.
 */
export function newestStoredRecord(
  store: Store,
  since: string,
  until: string,
  actionTypes: readonly string[],
): { id: string; occurredAt: number | null } | undefined {
  const placeholders = actionTypes.map(() => "?").join(", ");
  return sqliteOf(store)
    .prepare<unknown[], { id: string; occurredAt: number | null }>(
      `SELECT id, occurred_at AS occurredAt FROM audit_logs WHERE server_day BETWEEN ? AND ?
       ${actionTypes.length === 0 ? "" : `AND action_type IN (${placeholders})`}
       ORDER BY occurred_at DESC, seq DESC LIMIT 1`,
    )
    .get(since, until, ...actionTypes);
}

// ---- plans and window progress ---------------------------------------------------------------------

/** What a resumed run must reuse exactly: the same windows, page size and latestID as when it began. */
export const syncPlanSchema = z.object({
  filterKey: z.string(),
  actionTypes: z.array(z.string()),
  since: z.string(),
  until: z.string(),
  pageSize: z.number().int().positive(),
  /** latestID sent in the window that holds the checkpoint's day; null on full or explicit ranges. */
  latestId: z.string().nullable(),
  latestIdWindowStart: z.string().nullable(),
  /** Newest record of the plan (page 1 of the newest window): the next checkpoint. */
  headId: z.string().nullable(),
  headOccurredAt: z.number().nullable(),
  headFetched: z.boolean(),
  startedAt: z.number(),
  runId: z.number(),
});
export type SyncPlan = z.infer<typeof syncPlanSchema>;

export interface SyncWindow {
  startDate: string;
  endDate: string;
  status: "pending" | "done";
  nextPage: number;
}

const planKey = (filterKey: string) => `sync_plan:${filterKey}`;

export function readPlan(store: Store, filterKey: string): SyncPlan | undefined {
  const value = sqliteOf(store)
    .prepare<[string], string>("SELECT value FROM meta WHERE key = ?")
    .pluck()
    .get(planKey(filterKey));
  if (value === undefined) return undefined;
  const parsed = syncPlanSchema.safeParse(JSON.parse(value));
  // A plan this version cannot read is dropped: the next run re-plans (dedupe makes that safe).
  return parsed.success ? parsed.data : undefined;
}

export function savePlan(store: Store, plan: SyncPlan, now: number): void {
  sqliteOf(store)
    .prepare(
      `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    )
    .run(planKey(plan.filterKey), JSON.stringify(plan), now);
}

/** Replaces the filter set's windows with a fresh plan (one transaction with savePlan). */
export function createPlan(
  store: Store,
  plan: SyncPlan,
  windows: readonly { startDate: string; endDate: string }[],
  now: number,
): void {
  sqliteOf(store)
    .transaction(() => {
      sqliteOf(store).prepare("DELETE FROM sync_windows WHERE filter_key = ?").run(plan.filterKey);
      const insert = sqliteOf(store).prepare(
        `INSERT INTO sync_windows (filter_key, start_date, end_date, status, next_page, updated_at, sync_run_id)
         VALUES (?, ?, ?, 'pending', 1, ?, ?)`,
      );
      for (const w of windows) insert.run(plan.filterKey, w.startDate, w.endDate, now, plan.runId);
      savePlan(store, plan, now);
    })
    .immediate();
}

export function readWindows(store: Store, filterKey: string): SyncWindow[] {
  return sqliteOf(store)
    .prepare<[string], { start_date: string; end_date: string; status: string; next_page: number }>(
      "SELECT start_date, end_date, status, next_page FROM sync_windows WHERE filter_key = ? ORDER BY start_date DESC",
    )
    .all(filterKey)
    .map((row) => ({
      startDate: row.start_date,
      endDate: row.end_date,
      status: row.status === "done" ? "done" : "pending",
      nextPage: row.next_page,
    }));
}

export function advanceWindow(
  store: Store,
  filterKey: string,
  window: { startDate: string; endDate: string },
  progress: { nextPage: number; done: boolean; runId: number; now: number },
): void {
  sqliteOf(store)
    .prepare(
      `UPDATE sync_windows SET next_page = ?, status = ?, updated_at = ?, sync_run_id = ?
       WHERE filter_key = ? AND start_date = ? AND end_date = ?`,
    )
    .run(
      progress.nextPage,
      progress.done ? "done" : "pending",
      progress.now,
      progress.runId,
      filterKey,
      window.startDate,
      window.endDate,
    );
}

/** The plan is finished: its windows and plan row go away (so later plans never skip a window). */
export function dropPlan(store: Store, filterKey: string): void {
  sqliteOf(store).prepare("DELETE FROM sync_windows WHERE filter_key = ?").run(filterKey);
  sqliteOf(store).prepare("DELETE FROM meta WHERE key = ?").run(planKey(filterKey));
}

export function listPlans(store: Store): SyncPlan[] {
  return sqliteOf(store)
    .prepare<[], string>("SELECT value FROM meta WHERE key LIKE 'sync\\_plan:%' ESCAPE '\\' ORDER BY key")
    .pluck()
    .all()
    .map((value) => syncPlanSchema.safeParse(JSON.parse(value)))
    .flatMap((parsed) => (parsed.success ? [parsed.data] : []));
}

// ---- coverage --------------------------------------------------------------------------------------

/** The stored coverage of a day, if any. */
export function readCoverage(
  store: Store,
  filterKey: string,
  day: string,
): { serverTotal: number; localCount: number; quarantinedCount: number } | undefined {
  return sqliteOf(store)
    .prepare<[string, string], { serverTotal: number; localCount: number; quarantinedCount: number }>(
      `SELECT server_total AS serverTotal, local_count AS localCount, quarantined_count AS quarantinedCount
       FROM coverage WHERE filter_key = ? AND day = ?`,
    )
    .get(filterKey, day);
}

export function writeCoverage(
  store: Store,
  row: {
    filterKey: string;
    day: string;
    serverTotal: number;
    /** Records held for the day: valid ones plus quarantined ones. */
    localCount: number;
    quarantinedCount: number;
    /** The server's day had ended when it was checked (a final count). */
    dayClosed: boolean;
    runId: number;
    now: number;
  },
): void {
  sqliteOf(store)
    .prepare(
      `INSERT INTO coverage (filter_key, day, server_total, local_count, checked_at, sync_run_id, day_closed,
         quarantined_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(filter_key, day) DO UPDATE SET server_total = excluded.server_total,
         local_count = excluded.local_count, checked_at = excluded.checked_at, sync_run_id = excluded.sync_run_id,
         day_closed = excluded.day_closed, quarantined_count = excluded.quarantined_count`,
    )
    .run(
      row.filterKey,
      row.day,
      row.serverTotal,
      row.localCount,
      row.now,
      row.runId,
      row.dayClosed ? 1 : 0,
      row.quarantinedCount,
    );
}

/** Days of a filter set whose coverage was taken before the server's day ended: to be checked again. */
export function openCoverageDays(store: Store, filterKey: string): string[] {
  return sqliteOf(store)
    .prepare<[string], string>(
      "SELECT day FROM coverage WHERE filter_key = ? AND day_closed = 0 ORDER BY day",
    )
    .pluck()
    .all(filterKey);
}

/** Texts of the newest stored record with a parseable time: its offset is the server zone's latest. */
export function newestRecordTimeTexts(store: Store): { dateText: string; timeText: string } | undefined {
  return sqliteOf(store)
    .prepare<[], { dateText: string; timeText: string }>(
      `SELECT date_text AS dateText, time_text AS timeText FROM audit_logs
       WHERE occurred_at IS NOT NULL ORDER BY occurred_at DESC LIMIT 1`,
    )
    .get();
}

// ---- coverage still to check -----------------------------------------------------------------------

/**
 * Days whose coverage a finished plan still owes, per filter set (meta `coverage_pending:<filter_key>`).
 * Written in the transaction that drops the plan and emptied day by day as coverage rows are written, so
 * a run killed during its coverage phase leaves the rest for the next run.
 */
const pendingCoverageKey = (filterKey: string) => `coverage_pending:${filterKey}`;
const pendingCoverageSchema = z.array(z.string());

export function readPendingCoverageDays(store: Store, filterKey: string): string[] {
  const value = sqliteOf(store)
    .prepare<[string], string>("SELECT value FROM meta WHERE key = ?")
    .pluck()
    .get(pendingCoverageKey(filterKey));
  if (value === undefined) return [];
  const parsed = pendingCoverageSchema.safeParse(JSON.parse(value));
  return parsed.success ? parsed.data : [];
}

function writePendingCoverageDays(
  store: Store,
  filterKey: string,
  days: readonly string[],
  now: number,
): void {
  if (days.length === 0) {
    sqliteOf(store).prepare("DELETE FROM meta WHERE key = ?").run(pendingCoverageKey(filterKey));
    return;
  }
  sqliteOf(store)
    .prepare(
      `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    )
    .run(pendingCoverageKey(filterKey), JSON.stringify(days), now);
}

export function addPendingCoverageDays(
  store: Store,
  filterKey: string,
  days: readonly string[],
  now: number,
): void {
  const merged = [...new Set([...readPendingCoverageDays(store, filterKey), ...days])].sort();
  writePendingCoverageDays(store, filterKey, merged, now);
}

export function removePendingCoverageDays(
  store: Store,
  filterKey: string,
  days: readonly string[],
  now: number,
): void {
  const current = readPendingCoverageDays(store, filterKey);
  const done = new Set(days);
  if (!current.some((d) => done.has(d))) return;
  writePendingCoverageDays(
    store,
    filterKey,
    current.filter((d) => !done.has(d)),
    now,
  );
}

// ---- the end of a plan -----------------------------------------------------------------------------

/**
 * Whether a finished plan's newest record may replace the checkpoint. An incremental plan (latestID)
 * only ever sees newer records; an explicit or full range must not move the checkpoint back in time.
 */
function shouldAdvance(plan: SyncPlan, current: Checkpoint | undefined): boolean {
  if (current === undefined || plan.latestId !== null) return true;
  if (current.latestOccurredAt === null) return true;
  return plan.headOccurredAt !== null && plan.headOccurredAt >= current.latestOccurredAt;
}

/** The checkpoint a finished plan leaves, or undefined to keep the current one. */
function nextCheckpoint(
  store: Store,
  plan: SyncPlan,
  current: Checkpoint | undefined,
): { id: string; occurredAt: number | null } | undefined {
  if (plan.headId !== null) {
    return shouldAdvance(plan, current) ? { id: plan.headId, occurredAt: plan.headOccurredAt } : undefined;
  }
  // The newest window's first page was empty (no activity lately) or all quarantined: the newest
  // record stored for the plan's range is the head, if it is newer than the checkpoint.
  const newest = newestStoredRecord(store, plan.since, plan.until, plan.actionTypes);
  if (!newest) return undefined;
  const newer =
    current === undefined ||
    (newest.occurredAt != null &&
      current.latestOccurredAt !== null &&
      newest.occurredAt > current.latestOccurredAt);
  return newer ? newest : undefined;
}

/**
 * A plan is done: in one transaction, move the checkpoint, forget the windows, and remember the days
 * whose coverage is still owed (so a run stopped during its coverage phase leaves them to the next run).
 */
export async function finishPlan(
  store: Store,
  plan: SyncPlan,
  end: { runId: number; now: number; coverageDaysOwed: readonly string[] },
): Promise<void> {
  sqliteOf(store)
    .transaction(() => {
      const current = readCheckpoint(store, plan.filterKey);
      const next = nextCheckpoint(store, plan, current);
      if (next) {
        writeCheckpoint(store, {
          filterKey: plan.filterKey,
          latestId: next.id,
          latestOccurredAt: next.occurredAt,
          runId: end.runId,
          now: end.now,
        });
      }
      dropPlan(store, plan.filterKey);
      if (end.coverageDaysOwed.length > 0) {
        addPendingCoverageDays(store, plan.filterKey, end.coverageDaysOwed, end.now);
      }
    })
    .immediate();
}

/**
 * A run that failed before its plan read anything (a rejected key, the server down) leaves no plan
 * behind: there is nothing to resume, and a later run must plan its own range.
 */
export async function dropPlanIfUntouched(store: Store, filterKey: string): Promise<boolean> {
  const windows = readWindows(store, filterKey);
  if (windows.some((w) => w.status === "done" || w.nextPage > 1)) return false;
  sqliteOf(store)
    .transaction(() => dropPlan(store, filterKey))
    .immediate();
  return true;
}

/** The oldest server day stored (a full re-read starts there). */
export function oldestServerDay(store: Store): string | null {
  return (
    sqliteOf(store).prepare<[], string | null>("SELECT min(server_day) FROM audit_logs").pluck().get() ?? null
  );
}

// ---- the page size the server grants ---------------------------------------------------------------

const PAGE_SIZE_KEY = "page_size_granted";

export async function readGrantedPageSize(store: Store): Promise<number | undefined> {
  const value = sqliteOf(store)
    .prepare<[string], string>("SELECT value FROM meta WHERE key = ?")
    .pluck()
    .get(PAGE_SIZE_KEY);
  const parsed = z.coerce.number().int().positive().safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export async function saveGrantedPageSize(store: Store, size: number, now: number): Promise<void> {
  sqliteOf(store)
    .prepare(
      `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    )
    .run(PAGE_SIZE_KEY, String(size), now);
}
