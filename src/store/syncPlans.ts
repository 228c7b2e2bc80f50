// A run's plan and its windows' progress, so that a killed run resumes where it stopped; a plan's end in one
// transaction; the page size the server granted (a resumed plan pages with it).
import { z } from "zod";
import { parseStoredJson } from "../storedJson.ts";
import { type Checkpoint, newestStoredRecordIn, readCheckpointIn, writeCheckpointIn } from "./checkpoints.ts";
import { changePendingCoverageDaysIn } from "./coverageState.ts";
import {
  deleteMetaValueQuery,
  readMetaValue,
  readMetaValuesWithPrefix,
  writeMetaValue,
  writeMetaValueQuery,
} from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { inTransaction, onStore, type Queries, queriesOf, sql } from "./query.ts";

/** What a resumed run must reuse exactly: the same windows, page size and latestID as when it began. */
const syncPlanSchema = z.object({
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

// A plan this version cannot read is dropped: the next run re-plans (dedupe makes that safe).
const parsePlan = (value: string | undefined) => parseStoredJson(syncPlanSchema, value) ?? undefined;

export async function readStoredPlan(store: AnyStore, filterKey: string): Promise<SyncPlan | undefined> {
  return parsePlan(await readMetaValue(store, planKey(filterKey)));
}

/** Every stored plan this version can read, by filter key (byte order). */
export async function readStoredPlans(store: AnyStore): Promise<SyncPlan[]> {
  const values = await readMetaValuesWithPrefix(store, planKey(""));
  return [...values.values()].flatMap((value) => parsePlan(value) ?? []);
}

export async function savePlanIn(q: Queries, plan: SyncPlan, now: number): Promise<void> {
  await q.run(writeMetaValueQuery(planKey(plan.filterKey), JSON.stringify(plan), now));
}

/** A fresh plan replaces the filter set's windows (one JSON array: one statement however many). */
export async function createPlan(
  store: AnyStore,
  plan: SyncPlan,
  windows: readonly { startDate: string; endDate: string }[],
  now: number,
): Promise<void> {
  const bounds = JSON.stringify(windows.map((w) => ({ s: w.startDate, e: w.endDate })));
  await inTransaction(store, async (q) => {
    await q.run(sql`DELETE FROM sync_windows WHERE filter_key = ${plan.filterKey}`);
    await q.run(
      sql`INSERT INTO sync_windows (filter_key, start_date, end_date, status, next_page, updated_at, sync_run_id)
        SELECT ${plan.filterKey}, json_extract(w.value, '$.s'), json_extract(w.value, '$.e'), 'pending', 1,
          ${now}, ${plan.runId}
        FROM json_each(${bounds}) w`,
    );
    await savePlanIn(q, plan, now);
  });
}

async function windowsIn(q: Queries, filterKey: string): Promise<SyncWindow[]> {
  return q.all<SyncWindow>(
    sql`SELECT start_date AS "startDate", end_date AS "endDate", next_page AS "nextPage",
        CASE WHEN status = 'done' THEN 'done' ELSE 'pending' END AS status
      FROM sync_windows WHERE filter_key = ${filterKey} ORDER BY start_date COLLATE "binary" DESC`,
  );
}

export const readStoredWindows = onStore(windowsIn);

export async function advanceWindowIn(
  q: Queries,
  filterKey: string,
  w: { startDate: string; endDate: string; nextPage: number; done: boolean },
  by: { runId: number; now: number },
): Promise<void> {
  await q.run(
    sql`UPDATE sync_windows SET next_page = ${w.nextPage}, status = ${w.done ? "done" : "pending"},
        updated_at = ${by.now}, sync_run_id = ${by.runId}
      WHERE filter_key = ${filterKey} AND start_date = ${w.startDate} AND end_date = ${w.endDate}`,
  );
}

/** The plan is finished: its windows and plan row go away (so later plans never skip a window). */
async function dropPlanIn(q: Queries, filterKey: string): Promise<void> {
  await q.run(sql`DELETE FROM sync_windows WHERE filter_key = ${filterKey}`);
  await q.run(deleteMetaValueQuery(planKey(filterKey)));
}

/** A record that may become the checkpoint: its id and date. */
export type StoredHead = { id: string; occurredAt: number | null };

/** The sync's rule for a finished plan's checkpoint (undefined: keep it); `newestStored`: the range's newest. */
export type CheckpointRule = (
  current: Checkpoint | undefined,
  newestStored: () => Promise<StoredHead | undefined>,
) => Promise<StoredHead | undefined>;

/** A plan is done, in one transaction: the checkpoint moves (where `rule` says), the windows go, owed days stay. */
export async function finishPlan(
  store: AnyStore,
  plan: SyncPlan,
  end: { runId: number; now: number; coverageDaysOwed: readonly string[] },
  rule: CheckpointRule,
): Promise<void> {
  await inTransaction(store, async (q) => {
    const current = await readCheckpointIn(q, plan.filterKey);
    const next = await rule(current, () => newestStoredRecordIn(q, plan.since, plan.until, plan.actionTypes));
    if (next) {
      await writeCheckpointIn(q, {
        filterKey: plan.filterKey,
        latestId: next.id,
        latestOccurredAt: next.occurredAt,
        runId: end.runId,
        now: end.now,
      });
    }
    await dropPlanIn(q, plan.filterKey);
    if (end.coverageDaysOwed.length > 0) {
      await changePendingCoverageDaysIn(q, plan.filterKey, { add: end.coverageDaysOwed }, end.now);
    }
  });
}

/** Drops the filter set's plan when its windows are `droppable` (the sync's rule), in one transaction. */
export async function dropPlanIf(
  store: AnyStore,
  filterKey: string,
  droppable: (windows: readonly SyncWindow[]) => boolean,
): Promise<boolean> {
  return inTransaction(store, async (q) => {
    if (!droppable(await windowsIn(q, filterKey))) return false;
    await dropPlanIn(q, filterKey);
    return true;
  });
}

/** The oldest server day stored (a full re-read starts there), in byte order on both engines. */
export async function oldestServerDay(store: AnyStore): Promise<string | null> {
  const row = await (await queriesOf(store)).get<{ day: string | null }>(
    sql`SELECT min(server_day COLLATE "binary") AS day FROM audit_logs`,
  );
  return row?.day ?? null;
}

const PAGE_SIZE_KEY = "page_size_granted";

const pageSizeSchema = z.coerce.number().int().positive();

export async function readGrantedPageSize(store: AnyStore): Promise<number | undefined> {
  const parsed = pageSizeSchema.safeParse(await readMetaValue(store, PAGE_SIZE_KEY));
  return parsed.success ? parsed.data : undefined;
}

export async function saveGrantedPageSize(store: AnyStore, size: number, now: number): Promise<void> {
  await writeMetaValue(store, PAGE_SIZE_KEY, String(size), now);
}
