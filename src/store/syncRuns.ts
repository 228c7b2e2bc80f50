// One row per `flagtrail sync` run (and daemon cycle): its counters, outcome and error.
import { sqliteOf } from "./connection.ts";
import type { Store } from "./open.ts";
import type { PageCounts } from "./records.ts";

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

/** The counter columns of a run row, by the names both engines bind. */
export function runCounterColumns(c: RunCounters) {
  return {
    fetched: c.fetched,
    inserted: c.inserted,
    duplicates: c.duplicates,
    mutations: c.mutations,
    quarantined: c.quarantined,
    warnings: c.warnings,
    requests: c.requests,
    throttled: c.throttled,
    retries: c.retries,
  };
}

export function updateRunCounters(store: Store, runId: number, counters: RunCounters): void {
  sqliteOf(store)
    .prepare(
      `UPDATE sync_runs SET fetched = @fetched, inserted = @inserted, duplicates = @duplicates,
         mutations = @mutations, quarantined = @quarantined, warnings = @warnings, requests = @requests,
         throttled = @throttled, retries = @retries WHERE id = @runId`,
    )
    .run({ ...runCounterColumns(counters), runId });
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
