// The sync's write path: several pages in ONE transaction with everything they advance — each window's
// next page, the plan's head (the next checkpoint), the run's counters, the rule-diff mark. A kill loses
// at most the batch being written, and the stored progress then points at its first page again.
import { type Store, sqliteOf } from "./connection.ts";
import { noteListedDay } from "./coverageCounts.ts";
import { updateQuarantineDigest, writeChainHeadSignature } from "./digests.ts";
import { sqliteQueriesOn } from "./query.ts";
import { addCounts, type PageWriteResult, type PreparedRecord } from "./records.ts";
import { advanceBackfillMark } from "./ruleDiffs.ts";
import { advanceWindow, type SyncPlan, savePlan } from "./syncPlans.ts";
import { type RunCounters, updateRunCounters } from "./syncRuns.ts";
import { readChainHead, storePrepared } from "./writes.ts";

export interface BatchPage {
  /** The page's records worked out ahead of the transaction (prepareRecords). */
  prepared: readonly PreparedRecord[];
  requestPath: string;
  /** The request's startDate..endDate. */
  dayRange: { from: string; to: string };
  /** The window this page belongs to and its progress once the page is stored (day repairs have none). */
  window?: { startDate: string; endDate: string; nextPage: number; done: boolean };
  /** A single-day read: the server lists every record of the page under this day. */
  listedDay?: string;
  /** Page 1 of the plan's newest window: its first valid record becomes the plan's head. */
  holdsHead?: boolean;
}

export interface SyncBatch {
  plan: SyncPlan | null;
  runId: number;
  pages: readonly BatchPage[];
  /** The run's counters before this batch; the stored row gets them plus the batch's counts. */
  counters: RunCounters;
  now: number;
  /** Signs the chain head (HMAC) so that verify with the key catches a truncation. Never stored. */
  signingKey?: string | undefined;
}

export interface BatchResult {
  counters: RunCounters;
  /** The plan with its head set, when this batch held it. */
  plan: SyncPlan | null;
  warningMessages: string[];
}

const selectOccurredAt = (store: Store, id: string): number | null =>
  (sqliteOf(store).prepare("SELECT occurred_at FROM audit_logs WHERE id = ?").pluck().get(id) as
    | number
    | null
    | undefined) ?? null;

/** The ids a single-day read listed: every record of the page but the quarantined ones. */
export function listedIds(result: PageWriteResult): string[] {
  return result.outcomes.flatMap((o) => (o.kind === "quarantined" ? [] : [o.id]));
}

/**
 * The id that becomes the plan's head with this page (null: the page held no valid record), or
 * undefined when the page does not set the head. The newest record of the plan becomes the next
 * checkpoint once the plan completes.
 */
export function planHeadOf(
  plan: SyncPlan | null,
  page: BatchPage,
  result: PageWriteResult,
): string | null | undefined {
  if (!plan || !page.holdsHead || plan.headFetched) return undefined;
  return result.outcomes.find((o) => o.kind !== "quarantined")?.id ?? null;
}

function commit(store: Store, batch: SyncBatch): BatchResult {
  const sqlite = sqliteOf(store);
  const counters = { ...batch.counters };
  const warningMessages: string[] = [];
  let plan = batch.plan;
  const headBefore = readChainHead(sqlite).seq;
  for (const page of batch.pages) {
    const result: PageWriteResult = storePrepared(sqlite, page.prepared, {
      syncRunId: batch.runId,
      requestPath: page.requestPath,
      dayRange: page.dayRange,
      now: batch.now,
    });
    addCounts(counters, result);
    if (page.listedDay !== undefined) noteListedDay(sqlite, listedIds(result), page.listedDay);
    warningMessages.push(...result.warningMessages);
    if (plan && page.window) {
      advanceWindow(store, plan.filterKey, page.window, {
        nextPage: page.window.nextPage,
        done: page.window.done,
        runId: batch.runId,
        now: batch.now,
      });
    }
    const headId = planHeadOf(plan, page, result);
    if (plan && headId !== undefined) {
      const headOccurredAt = headId === null ? null : selectOccurredAt(store, headId);
      plan = { ...plan, headFetched: true, headId, headOccurredAt };
      savePlan(store, plan, batch.now);
    }
  }
  advanceBackfillMark(sqliteQueriesOn(sqlite), headBefore, readChainHead(sqlite).seq);
  writeChainHeadSignature(sqlite, batch.signingKey);
  // Created on the first batch even with no quarantined record, so verify covers the table from the start.
  updateQuarantineDigest(sqlite);
  updateRunCounters(store, batch.runId, counters);
  return { counters, plan, warningMessages };
}

/** Commits one batch (IMMEDIATE: the write lock up front, so a reader turned writer cannot deadlock us). */
export async function commitSyncBatch(store: Store, batch: SyncBatch): Promise<BatchResult> {
  return sqliteOf(store)
    .transaction(() => commit(store, batch))
    .immediate();
}
