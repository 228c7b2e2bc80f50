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
