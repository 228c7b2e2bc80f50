// The sync's write path, one text for both engines: several pages in ONE transaction with all they
// advance (windows, plan head, run counters, rule diffs, chain head and signature, quarantine digest), so
// a kill loses at most the batch being written. Only the record writer differs per engine (BatchWriter).

import { checkBeforeBatch } from "../chainChecks.ts";
import { signChainHead } from "../digests.ts";
import {
  addCounts,
  CHAIN_HEAD_HASH_KEY,
  CHAIN_HEAD_SEQ_KEY,
  type InsertedRecord,
  type PageContext,
  type PageTally,
  type PageWriteResult,
  type PreparedRecord,
} from "../records/pageTally.ts";
import { stateBeforeWriteIn } from "./chainRead.ts";
import { noteListedDay } from "./coverageCounts.ts";
import { CHAIN_HEAD_SIGNATURE_KEY, CHAIN_HEAD_SIGNED_SEQ_KEY, digestEntriesIn } from "./digests.ts";
import { type MetaEntry, writeMetaValuesQuery } from "./metaValues.ts";
import { type AnyStore, pgSide } from "./openAny.ts";
import { inTransaction, type Queries, sql } from "./query.ts";
import { backfillMarkMoved, insertRuleDiffRows } from "./ruleDiffs.ts";
import { advanceWindowIn, type SyncPlan, savePlanIn } from "./syncPlans.ts";
import { type RunCounters, updateRunCountersIn } from "./syncRuns.ts";
import { flushWalInBackground } from "./walFlush.ts";
import { type ChainHead, sqliteBatchWriter } from "./writes.ts";

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
  /** The key the head was signed with before a rotation (chainChecks.ts, checkBeforeBatch). */
  previousSigningKey?: string | undefined;
}

export interface BatchResult {
  counters: RunCounters;
  /** The plan with its head set, when this batch held it. */
  plan: SyncPlan | null;
  warningMessages: string[];
}

// The id that becomes the plan's head (next checkpoint) with this page: null if none is valid,
// undefined if the page does not set the head.
function planHeadOf(
  plan: SyncPlan | null,
  page: BatchPage,
  result: PageWriteResult,
): string | null | undefined {
  if (!plan || !page.holdsHead || plan.headFetched) return undefined;
  return result.outcomes.find((o) => o.kind !== "quarantined")?.id ?? null;
}

// A batch's record writer (writes.ts, pg/writes.ts): storePage tallies pages in order; write() inserts
// what they added (SQLite's inserted each page already); rows that reference audit_logs follow.
export interface BatchWriter {
  storePage(prepared: readonly PreparedRecord[], context: PageContext): Promise<PageTally>;
  write(): Promise<void>;
  /** The chain's head before the batch and now. */
  heads(): { before: ChainHead; after: ChainHead };
}

/** The index of each window's last page in the batch: only its progress is written (the batch is whole). */
function lastPageOfEachWindow(pages: readonly BatchPage[]): Set<number> {
  const last = new Map<string, number>();
  for (const [i, page] of pages.entries())
    if (page.window) last.set(`${page.window.startDate}..${page.window.endDate}`, i);
  return new Set(last.values());
}

async function commit(store: AnyStore, q: Queries, batch: SyncBatch): Promise<BatchResult> {
  const counters = { ...batch.counters };
  let plan = batch.plan;
  const writer =
    store.engine === "sqlite"
      ? sqliteBatchWriter(store)
      : await (await pgSide()).openPgBatchWriter(q, batch.pages, batch.now);
  // Links from the last stored record, so a break at the end must stop the batch, not be covered.
  const { seq, hash } = writer.heads().before;
  const last = seq === 0 ? null : { seq, chainHash: hash };
  const state = await stateBeforeWriteIn(q, last);
  const warnings = checkBeforeBatch(state, batch.signingKey, batch.previousSigningKey);
  counters.warnings += warnings.length;
  const results: PageWriteResult[] = [];
  const inserted: InsertedRecord[] = [];
  for (const page of batch.pages) {
    const context = {
      syncRunId: batch.runId,
      requestPath: page.requestPath,
      dayRange: page.dayRange,
      now: batch.now,
    };
    const tally = await writer.storePage(page.prepared, context);
    results.push(tally.result);
    inserted.push(...tally.inserted);
  }
  await writer.write();
  await insertRuleDiffRows(q, inserted);
  const lastOfWindow = lastPageOfEachWindow(batch.pages);
  for (const [i, page] of batch.pages.entries()) {
    const result = results[i]!;
    addCounts(counters, result);
    if (page.listedDay !== undefined) {
      // A single-day read lists every record of its page but the quarantined ones.
      const listed = result.outcomes.flatMap((o) => (o.kind === "quarantined" ? [] : [o.id]));
      await noteListedDay(q, listed, page.listedDay);
    }
    if (plan && page.window && lastOfWindow.has(i))
      await advanceWindowIn(q, plan.filterKey, page.window, { runId: batch.runId, now: batch.now });
    const headId = planHeadOf(plan, page, result);
    if (plan && headId !== undefined) {
      const row =
        headId === null
          ? undefined
          : await q.get<{ occurred_at: number | null }>(
              sql`SELECT occurred_at FROM audit_logs WHERE id = ${headId}`,
            );
      plan = { ...plan, headFetched: true, headId, headOccurredAt: row?.occurred_at ?? null };
      await savePlanIn(q, plan, batch.now);
    }
  }
  const quarantineAdded = results.some((r) => r.quarantined > 0);
  const entries = await metaAfterBatch(q, state, writer.heads(), quarantineAdded, batch.signingKey);
  if (entries.length > 0) await q.run(writeMetaValuesQuery(entries, batch.now));
  await updateRunCountersIn(q, batch.runId, counters);
  return { counters, plan, warningMessages: [...warnings, ...results.flatMap((r) => r.warningMessages)] };
}

/**
 * Every meta value the batch moves, for one statement: the chain head's mirror, the rule diffs' backfill
 * mark, the head's signature, the digests. Built on meta as read at the batch's start (same transaction).
 */
async function metaAfterBatch(
  q: Queries,
  state: Awaited<ReturnType<typeof stateBeforeWriteIn>>,
  { before, after }: { before: ChainHead; after: ChainHead },
  quarantineAdded: boolean,
  signingKey: string | undefined,
): Promise<MetaEntry[]> {
  const entries: MetaEntry[] = [];
  if (after.seq !== before.seq)
    entries.push([CHAIN_HEAD_SEQ_KEY, String(after.seq)], [CHAIN_HEAD_HASH_KEY, after.hash]);
  const mark = backfillMarkMoved(state.ruleDiffsBackfilledTo, before.seq, after.seq);
  if (mark) entries.push(mark);
  if (signingKey && after.seq > 0) {
    const signature = signChainHead({ seq: after.seq, chainHash: after.hash }, signingKey);
    entries.push([CHAIN_HEAD_SIGNATURE_KEY, signature], [CHAIN_HEAD_SIGNED_SEQ_KEY, String(after.seq)]);
  }
  entries.push(...(await digestEntriesIn(q, state, quarantineAdded)));
  return entries;
}

/** Commits one batch in one write transaction; on SQLite its log then goes to disk in the background. */
export async function commitSyncBatch(store: AnyStore, batch: SyncBatch): Promise<BatchResult> {
  const result = await inTransaction(store, (q) => commit(store, q, batch));
  if (store.engine === "sqlite") flushWalInBackground(store.path);
  return result;
}
