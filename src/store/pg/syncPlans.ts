// A run's plan and its window progress on PostgreSQL (src/store/syncPlans.ts on SQLite): the same meta
// keys and rows, the decisions (parsing a plan, whether one is untouched, the checkpoint a finished
// plan leaves) made by the SQLite module's pure functions.
import { and, eq } from "drizzle-orm";
import type pg from "pg";
import { newestStoredRecordIn, readCheckpointIn, writeCheckpointIn } from "../checkpoints.ts";
import {
  nextCheckpoint,
  PAGE_SIZE_KEY,
  parseGrantedPageSize,
  parsePlan,
  planKey,
  planUntouched,
  type SyncPlan,
  type SyncWindow,
  windowOfRow,
} from "../syncPlans.ts";
import type { PgStore } from "./connection.ts";
import { addPgPendingCoverageDaysIn } from "./coverage.ts";
import { readPgMeta, writePgMeta } from "./quarantine.ts";
import { pgQueriesOn } from "./queries.ts";
import { meta, syncWindows } from "./schema.ts";
import { onPgSession, pgDrizzleOn, pgRows } from "./session.ts";
import { inPgTransaction } from "./transaction.ts";

export async function readPgPlan(store: PgStore, filterKey: string): Promise<SyncPlan | undefined> {
  return parsePlan(await onPgSession(store, (client) => readPgMeta(client, planKey(filterKey))));
}

export async function savePgPlan(client: pg.ClientBase, plan: SyncPlan, now: number): Promise<void> {
  await writePgMeta(client, planKey(plan.filterKey), JSON.stringify(plan), now);
}

/** Replaces the filter set's windows with a fresh plan, in one transaction. */
export async function createPgPlan(
  store: PgStore,
  plan: SyncPlan,
  windows: readonly { startDate: string; endDate: string }[],
  now: number,
): Promise<void> {
  await inPgTransaction(store, async (client) => {
    await pgDrizzleOn(client).delete(syncWindows).where(eq(syncWindows.filterKey, plan.filterKey));
    // Column arrays rather than drizzle's VALUES list: a long range of short windows stays one statement.
    if (windows.length > 0) {
      await client.query(
        `INSERT INTO sync_windows (filter_key, start_date, end_date, status, next_page, updated_at, sync_run_id)
         SELECT $1, s, e, 'pending', 1, $4, $5 FROM unnest($2::text[], $3::text[]) AS w(s, e)`,
        [plan.filterKey, windows.map((w) => w.startDate), windows.map((w) => w.endDate), now, plan.runId],
      );
    }
    await savePgPlan(client, plan, now);
  });
}

async function windowsOn(client: pg.ClientBase, filterKey: string): Promise<SyncWindow[]> {
  const rows = await pgRows<{ start_date: string; end_date: string; status: string; next_page: number }>(
    client,
    `SELECT start_date, end_date, status, next_page FROM sync_windows WHERE filter_key = $1
     ORDER BY start_date COLLATE "C" DESC`,
    [filterKey],
  );
  return rows.map(windowOfRow);
}

export async function readPgWindows(store: PgStore, filterKey: string): Promise<SyncWindow[]> {
  return onPgSession(store, (client) => windowsOn(client, filterKey));
}

export async function advancePgWindow(
  client: pg.ClientBase,
  filterKey: string,
  window: { startDate: string; endDate: string },
  progress: { nextPage: number; done: boolean; runId: number; now: number },
): Promise<void> {
  await pgDrizzleOn(client)
    .update(syncWindows)
    .set({
      nextPage: progress.nextPage,
      status: progress.done ? "done" : "pending",
      updatedAt: progress.now,
      syncRunId: progress.runId,
    })
    .where(
      and(
        eq(syncWindows.filterKey, filterKey),
        eq(syncWindows.startDate, window.startDate),
        eq(syncWindows.endDate, window.endDate),
      ),
    );
}

async function dropPgPlan(client: pg.ClientBase, filterKey: string): Promise<void> {
  const db = pgDrizzleOn(client);
  await db.delete(syncWindows).where(eq(syncWindows.filterKey, filterKey));
  await db.delete(meta).where(eq(meta.key, planKey(filterKey)));
}

/** A plan is done: move the checkpoint, forget the windows, remember the days still owed, in one transaction. */
export async function finishPgPlan(
  store: PgStore,
  plan: SyncPlan,
  end: { runId: number; now: number; coverageDaysOwed: readonly string[] },
): Promise<void> {
  await inPgTransaction(store, async (client) => {
    const q = pgQueriesOn(client, store);
    const current = await readCheckpointIn(q, plan.filterKey);
    // Read ahead (nextCheckpoint asks synchronously): one indexed query per finished plan.
    const newest = await newestStoredRecordIn(q, plan.since, plan.until, plan.actionTypes);
    const next = nextCheckpoint(plan, current, () => newest);
    if (next) {
      await writeCheckpointIn(q, {
        filterKey: plan.filterKey,
        latestId: next.id,
        latestOccurredAt: next.occurredAt,
        runId: end.runId,
        now: end.now,
      });
    }
    await dropPgPlan(client, plan.filterKey);
    if (end.coverageDaysOwed.length > 0) {
      await addPgPendingCoverageDaysIn(client, plan.filterKey, end.coverageDaysOwed, end.now);
    }
  });
}

/** A run that failed before its plan read anything leaves no plan behind. */
export async function dropPgPlanIfUntouched(store: PgStore, filterKey: string): Promise<boolean> {
  return inPgTransaction(store, async (client) => {
    if (!planUntouched(await windowsOn(client, filterKey))) return false;
    await dropPgPlan(client, filterKey);
    return true;
  });
}

/** The oldest server day stored (COLLATE "C": SQLite's byte order). */
export async function oldestPgServerDay(store: PgStore): Promise<string | null> {
  const [row] = await onPgSession(store, (client) =>
    pgRows<{ day: string | null }>(client, `SELECT min(server_day COLLATE "C") AS day FROM audit_logs`),
  );
  return row?.day ?? null;
}

export async function readPgGrantedPageSize(store: PgStore): Promise<number | undefined> {
  return parseGrantedPageSize(await onPgSession(store, (client) => readPgMeta(client, PAGE_SIZE_KEY)));
}

export async function savePgGrantedPageSize(store: PgStore, size: number, now: number): Promise<void> {
  await onPgSession(store, (client) => writePgMeta(client, PAGE_SIZE_KEY, String(size), now));
}
