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
         warnings = ?, requests = ?, throttled = ? WHERE id = ?`,
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

/**
 * What the store holds for a server day, restricted to the filter set's action types when it has any:
 * valid records, and quarantined ones (stored, but failed validation; counted once per record id and
 * not when a valid version of the same id is stored). Both count towards the server's total.
 */
export function localCountForDay(
  store: Store,
  day: string,
  actionTypes: readonly string[],
): { stored: number; quarantined: number } {
  const placeholders = actionTypes.map(() => "?").join(", ");
  const storedSql =
    actionTypes.length === 0
      ? "SELECT count(*) FROM audit_logs WHERE server_day = ?"
      : `SELECT count(*) FROM audit_logs WHERE server_day = ? AND action_type IN (${placeholders})`;
  const quarantinedSql = `SELECT count(DISTINCT coalesce(record_id, raw_hash)) FROM quarantine
     WHERE server_day = ? AND (record_id IS NULL OR record_id NOT IN (SELECT id FROM audit_logs))
     ${actionTypes.length === 0 ? "" : `AND json_extract(raw, '$.actionType') IN (${placeholders})`}`;
  const stored = sqliteOf(store)
    .prepare<unknown[], number>(storedSql)
    .pluck()
    .get(day, ...actionTypes)!;
  const quarantined = sqliteOf(store)
    .prepare<unknown[], number>(quarantinedSql)
    .pluck()
    .get(day, ...actionTypes)!;
  return { stored, quarantined };
}

/** Quarantined records written before quarantine.server_day existed get their day from the raw date. */
export function fillQuarantineServerDays(store: Store, dayOf: (raw: unknown) => string | null): void {
  const rows = sqliteOf(store)
    .prepare<[], { id: number; raw: string }>("SELECT id, raw FROM quarantine WHERE server_day IS NULL")
    .all();
  if (rows.length === 0) return;
  const update = sqliteOf(store).prepare("UPDATE quarantine SET server_day = ? WHERE id = ?");
  sqliteOf(store)
    .transaction(() => {
      for (const row of rows) {
        let raw: unknown;
        try {
          raw = JSON.parse(row.raw);
        } catch {
          continue;
        }
        const day = dayOf(raw);
        if (day !== null) update.run(day, row.id);
      }
    })
    .immediate();
}

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

export function removePendingCoverageDay(store: Store, filterKey: string, day: string, now: number): void {
  const current = readPendingCoverageDays(store, filterKey);
  if (!current.includes(day)) return;
  writePendingCoverageDays(
    store,
    filterKey,
    current.filter((d) => d !== day),
    now,
  );
}
