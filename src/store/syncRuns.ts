// One row per `flagtrail sync` run (and daemon cycle): its counters, outcome and error.
import type { PageCounts } from "../records/pageTally.ts";
import type { AnyStore } from "./openAny.ts";
import { type Queries, queriesOf, type SQL, sql } from "./query.ts";

export interface RunCounters extends PageCounts {
  requests: number;
  throttled: number;
  /** Requests sent again after a failed attempt. */
  retries: number;
}

export async function startRun(
  store: AnyStore,
  run: { filterKey: string; params: Record<string, unknown>; now: number },
): Promise<number> {
  const row = await (await queriesOf(store)).get<{ id: number }>(
    sql`INSERT INTO sync_runs (started_at, outcome, filter_key, params, pid)
      VALUES (${run.now}, 'running', ${run.filterKey}, ${JSON.stringify(run.params)}, ${process.pid})
      RETURNING id`,
  );
  if (!row) throw new Error("sync_runs insert returned no id");
  return Number(row.id);
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

function setCounters(c: RunCounters): SQL {
  const columns = Object.entries(runCounterColumns(c));
  return sql.join(
    columns.map(([column, value]) => sql`${sql.raw(column)} = ${value}`),
    sql`, `,
  );
}

export async function updateRunCountersIn(q: Queries, runId: number, counters: RunCounters): Promise<void> {
  await q.run(sql`UPDATE sync_runs SET ${setCounters(counters)} WHERE id = ${runId}`);
}

export async function finishRun(
  store: AnyStore,
  runId: number,
  outcome: "ok" | "failed" | "interrupted",
  counters: RunCounters,
  error: string | null,
  now: number,
): Promise<void> {
  await (await queriesOf(store)).run(
    sql`UPDATE sync_runs SET ${setCounters(counters)}, outcome = ${outcome}, finished_at = ${now}, error = ${error}
      WHERE id = ${runId}`,
  );
}

/** Runs still `running` while we hold the sync lease belong to processes that died: interrupted. */
export async function markOrphanRunsInterrupted(store: AnyStore, now: number): Promise<number> {
  return (await queriesOf(store)).run(
    sql`UPDATE sync_runs SET outcome = 'interrupted', finished_at = ${now},
        error = coalesce(error, 'the process ended before the run finished')
      WHERE outcome = 'running'`,
  );
}
