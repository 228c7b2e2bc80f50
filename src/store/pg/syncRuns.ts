// sync_runs on PostgreSQL (src/store/syncRuns.ts on SQLite): one row per sync run and daemon cycle.
import { eq, sql } from "drizzle-orm";
import type pg from "pg";
import { type RunCounters, type RunOutcome, runCounterColumns } from "../syncRuns.ts";
import type { PgStore } from "./connection.ts";
import { syncRuns } from "./schema.ts";
import { pgDrizzleOn, withPgDb } from "./session.ts";

export async function startPgRun(
  store: PgStore,
  run: { filterKey: string; params: Record<string, unknown>; now: number },
): Promise<number> {
  const [row] = await withPgDb(store, (db) =>
    db
      .insert(syncRuns)
      .values({
        startedAt: run.now,
        outcome: "running",
        filterKey: run.filterKey,
        params: JSON.stringify(run.params),
        pid: process.pid,
      })
      .returning({ id: syncRuns.id }),
  );
  if (!row) throw new Error("sync_runs insert returned no id");
  return row.id;
}

/** Inside a write transaction's session: the run's counters as of this batch. */
export async function updatePgRunCounters(
  client: pg.ClientBase,
  runId: number,
  counters: RunCounters,
): Promise<void> {
  await pgDrizzleOn(client).update(syncRuns).set(runCounterColumns(counters)).where(eq(syncRuns.id, runId));
}

export async function finishPgRun(
  store: PgStore,
  runId: number,
  outcome: Exclude<RunOutcome, "running">,
  counters: RunCounters,
  error: string | null,
  now: number,
): Promise<void> {
  await withPgDb(store, (db) =>
    db
      .update(syncRuns)
      .set({ ...runCounterColumns(counters), outcome, finishedAt: now, error })
      .where(eq(syncRuns.id, runId)),
  );
}

/** Runs still `running` while we hold the sync lease belong to processes that died: mark them interrupted. */
export async function markPgOrphanRunsInterrupted(store: PgStore, now: number): Promise<number> {
  const marked = await withPgDb(store, (db) =>
    db
      .update(syncRuns)
      .set({
        outcome: "interrupted",
        finishedAt: now,
        error: sql`coalesce(${syncRuns.error}, 'the process ended before the run finished')`,
      })
      .where(eq(syncRuns.outcome, "running"))
      .returning({ id: syncRuns.id }),
  );
  return marked.length;
}
