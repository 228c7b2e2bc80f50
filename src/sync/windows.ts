// Executing a plan: every pending window is paged (windows and their pages in parallel, within the
// run's request slots), each page goes to the batch writer with the window's progress, and a window read
// without latestID is checked by count against the totalItems its pages reported: when they agree,
// every day of the window is complete without a request of its own.
import { readPages } from "../api/pager.ts";
import {
  beginBulkLoad,
  finishBulkLoad,
  finishPlan,
  readWindows,
  type SyncPlan,
  type SyncWindow,
} from "../store/syncStore.ts";
import { recordMatchingRange } from "./coverage.ts";
import { localCountForRange } from "./coverageCounts.ts";
import { eachDay } from "./days.ts";
import { checkpointRule } from "./planEnd.ts";
import { runPool } from "./pool.ts";
import type { SyncRun } from "./run.ts";

/** A window whose count disagreed with the server: coverage bisects it. */
export interface RangeToCheck {
  from: string;
  to: string;
  /** The server's total for the range when known (from paging), else probed. */
  serverTotal?: number;
}

async function fetchWindow(run: SyncRun, plan: SyncPlan, window: SyncWindow, isNewest: boolean) {
  const useLatestId = plan.latestId !== null && window.startDate === plan.latestIdWindowStart;
  const pages = readPages(
    run.client,
    {
      startDate: window.startDate,
      endDate: window.endDate,
      sortOrder: "desc",
      ...(plan.actionTypes.length > 0 ? { actionTypes: plan.actionTypes } : {}),
      ...(useLatestId && plan.latestId !== null ? { latestID: plan.latestId } : {}),
    },
    {
      limit: plan.pageSize,
      firstPage: window.nextPage,
      prefetch: run.options.concurrency,
      budget: run.pageBudget,
      stopAtId: useLatestId ? plan.latestId : null,
      signal: run.signal,
    },
  );
  let serverTotal = 0;
  for await (const page of pages) {
    serverTotal = page.totalItems;
    await run.write({
      records: page.records,
      body: page.body,
      requestPath: page.requestPath,
      dayRange: { from: window.startDate, to: window.endDate },
      window: {
        startDate: window.startDate,
        endDate: window.endDate,
        nextPage: page.page + 1,
        done: page.last,
      },
      holdsHead: isNewest && page.page === 1,
    });
    run.pageStored();
  }
  return { serverTotal, countable: !useLatestId };
}

/**
 * Checks finished windows by count, once every window is stored (adjacent windows share a day); a
 * window that disagrees is returned for bisection.
 */
async function checkWindows(run: SyncRun, totals: readonly RangeToCheck[], mismatches: RangeToCheck[]) {
  for (const range of totals) {
    const local = await localCountForRange(run.store, range.from, range.to, run.options.actionTypes);
    if (local === range.serverTotal) await recordMatchingRange(run, range);
    else mismatches.push(range);
  }
}

/**
 * Pages the plan's pending windows, then moves the checkpoint and drops the plan in one transaction.
 * Adds the plan's windows done (earlier runs' included) to `tally`, as each is stored. Windows whose
 * counts disagreed are added to `mismatches`.
 */
export async function executePlan(
  run: SyncRun,
  plan: SyncPlan,
  mismatches: RangeToCheck[],
  tally: { windows: number },
): Promise<void> {
  const windows = await readWindows(run.store, plan.filterKey);
  const newestStart = windows[0]?.startDate;
  const pending = windows.filter((w) => w.status === "pending");
  let done = windows.length - pending.length;
  tally.windows += done;
  run.progress("windows", done, windows.length);
  const totals: RangeToCheck[] = [];
  run.plan = plan;
  // A backfill into an empty store builds its indexes, full-text index and diffs after the load.
  const bulk = pending.length > 1 && (await beginBulkLoad(run.store));
  try {
    await runPool(
      pending,
      run.options.concurrency,
      async (window) => {
        const { serverTotal, countable } = await fetchWindow(
          run,
          plan,
          window,
          window.startDate === newestStart,
        );
        if (countable) totals.push({ from: window.startDate, to: window.endDate, serverTotal });
        done += 1;
        tally.windows += 1;
        run.emit({
          type: "window",
          startDate: window.startDate,
          endDate: window.endDate,
          done,
          total: windows.length,
        });
        run.progress("windows", done, windows.length);
      },
      run.signal,
    );
  } finally {
    // Whatever was fetched is stored, even when a window failed or the run was stopped.
    await run.flush();
    if (bulk) await finishBulkLoad(run.store);
  }
  if (run.signal.aborted) return;
  if (run.options.coverage) await checkWindows(run, totals, mismatches);
  const finished = run.plan ?? plan;
  const owed = run.options.coverage
    ? eachDay(finished.since, finished.until).filter((d) => !run.checkedDays.has(d))
    : [];
  await finishPlan(
    run.store,
    finished,
    { runId: run.runId, now: run.now(), coverageDaysOwed: owed },
    checkpointRule(finished),
  );
}
