// A run's plan and its window progress, so that a killed run resumes where it stopped, and the end of a
// plan (checkpoint moved, windows forgotten, coverage owed) in one transaction. The page size the server
// granted is remembered here too: a resumed plan must page with the size it began with.
import { z } from "zod";
import { type Checkpoint, newestStoredRecord, readCheckpoint, writeCheckpoint } from "./checkpoints.ts";
import { sqliteOf } from "./connection.ts";
import { addPendingCoverageDays } from "./coverageState.ts";
import type { Store } from "./open.ts";

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

/** The meta key of a filter set's plan. */
export const planKey = (filterKey: string) => `sync_plan:${filterKey}`;

/** A stored plan's meta value as a plan, or undefined. */
export function parsePlan(value: string | undefined): SyncPlan | undefined {
  if (value === undefined) return undefined;
  const parsed = syncPlanSchema.safeParse(JSON.parse(value));
  // A plan this version cannot read is dropped: the next run re-plans (dedupe makes that safe).
  return parsed.success ? parsed.data : undefined;
}

export function readPlan(store: Store, filterKey: string): SyncPlan | undefined {
  return parsePlan(
    sqliteOf(store)
      .prepare<[string], string>("SELECT value FROM meta WHERE key = ?")
      .pluck()
      .get(planKey(filterKey)),
  );
}

/** A sync_windows row as the sync reads it. */
export function windowOfRow(row: {
  start_date: string;
  end_date: string;
  status: string;
  next_page: number;
}): SyncWindow {
  return {
    startDate: row.start_date,
    endDate: row.end_date,
    status: row.status === "done" ? "done" : "pending",
    nextPage: row.next_page,
  };
}

/** No window of the plan was read from (nothing to resume): the plan may be dropped. */
export function planUntouched(windows: readonly SyncWindow[]): boolean {
  return !windows.some((w) => w.status === "done" || w.nextPage > 1);
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
    .map(windowOfRow);
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

/**
 * The checkpoint a finished plan leaves, or undefined to keep the current one. `newestStored` is asked
 * for only when the plan has no head: the newest record stored for the plan's range.
 */
export function nextCheckpoint(
  plan: SyncPlan,
  current: Checkpoint | undefined,
  newestStored: () => { id: string; occurredAt: number | null } | undefined,
): { id: string; occurredAt: number | null } | undefined {
  if (plan.headId !== null) {
    return shouldAdvance(plan, current) ? { id: plan.headId, occurredAt: plan.headOccurredAt } : undefined;
  }
  // The newest window's first page was empty (no activity lately) or all quarantined: the newest
  // record stored for the plan's range is the head, if it is newer than the checkpoint.
  const newest = newestStored();
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
      const next = nextCheckpoint(plan, current, () =>
        newestStoredRecord(store, plan.since, plan.until, plan.actionTypes),
      );
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
  if (!planUntouched(readWindows(store, filterKey))) return false;
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

export const PAGE_SIZE_KEY = "page_size_granted";

/** The granted page size kept in meta, or undefined when missing or unreadable. */
export function parseGrantedPageSize(value: string | undefined): number | undefined {
  const parsed = z.coerce.number().int().positive().safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export async function readGrantedPageSize(store: Store): Promise<number | undefined> {
  return parseGrantedPageSize(
    sqliteOf(store)
      .prepare<[string], string>("SELECT value FROM meta WHERE key = ?")
      .pluck()
      .get(PAGE_SIZE_KEY),
  );
}

export async function saveGrantedPageSize(store: Store, size: number, now: number): Promise<void> {
  sqliteOf(store)
    .prepare(
      `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    )
    .run(PAGE_SIZE_KEY, String(size), now);
}
