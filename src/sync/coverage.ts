// Coverage: is every server day complete? A range of days is checked with ONE request (limit 1, its
// totalItems) against the store's count for the same days. When they agree every day in it is complete;
// when they disagree the range is halved — one probe per halving, the other half's total follows by
// subtraction — until the days that differ are found, and such a day is read again whole. So a complete
// history costs one request per contiguous range, and a gap about log2(days) more.

import { parseAuditTime } from "../api/auditTime.ts";
import { readPages } from "../api/pager.ts";
import {
  type CoverageDay,
  knownShortfalls,
  newestRecordTimeTexts,
  openCoverageDays,
  readCoverage,
  readPendingCoverageDays,
  recordCoverage,
} from "../store/syncStore.ts";
import { checkedRunStart, localCountForRange, localCountsByDay } from "./coverageCounts.ts";
import { addDays, daysBetween, eachDay, serverDayClosed } from "./days.ts";
import { runPool } from "./pool.ts";
import type { SyncRun } from "./run.ts";
import type { RangeToCheck } from "./windows.ts";

/** The server zone's offset (minutes east of UTC) as its newest stored record shows it, or null. */
async function latestServerOffset(run: SyncRun): Promise<number | null> {
  const newest = await newestRecordTimeTexts(run.store);
  if (!newest) return null;
  const parse = run.options.parseTime ?? parseAuditTime;
  return parse(newest.dateText, newest.timeText)?.offsetMinutes ?? null;
}

async function recordDays(run: SyncRun, days: CoverageDay[]): Promise<void> {
  await recordCoverage(run.store, run.filterKey, days, run.runId, run.now());
  for (const d of days) {
    run.checkedDays.add(d.day);
    if (d.localCount !== d.serverTotal)
      run.gaps.push({ day: d.day, local: d.localCount, server: d.serverTotal });
    if (!d.dayClosed) run.openDays.push(d.day);
  }
}

/**
 * Every day of a range whose total matched: each day's server total is what the store holds, plus the
 * shortfall of a gap reported before (the match counted it as expected).
 */
export async function recordMatchingRange(run: SyncRun, range: { from: string; to: string }): Promise<void> {
  const counts = await localCountsByDay(run.store, range.from, range.to, run.options.actionTypes);
  const shortfalls = await knownShortfalls(run.store, run.filterKey, range.from, range.to);
  const offset = await latestServerOffset(run);
  const at = run.now();
  await recordDays(
    run,
    eachDay(range.from, range.to).map((day) => {
      const count = counts.get(day);
      const held = count?.held ?? 0;
      return {
        day,
        serverTotal: held + (shortfalls.get(day) ?? 0),
        localCount: held,
        quarantinedCount: count?.quarantined ?? 0,
        dayClosed: serverDayClosed(day, at, offset),
      };
    }),
  );
}

/** The server's total for a range of days: one request of one record. */
async function probe(run: SyncRun, from: string, to: string): Promise<number> {
  run.coverageRequests += 1;
  const page = await run.client.listAuditLogs(
    {
      startDate: from,
      endDate: to,
      page: 1,
      limit: 1,
      sortOrder: "desc",
      ...(run.options.actionTypes.length > 0 ? { actionTypes: run.options.actionTypes } : {}),
    },
    run.signal,
  );
  return page.pagination.totalItems;
}

/** Something is missing for that day (a late record, an interrupted read): read it whole. */
async function repairDay(run: SyncRun, day: string, pageSize: number): Promise<void> {
  const pages = readPages(
    run.client,
    {
      startDate: day,
      endDate: day,
      sortOrder: "desc",
      ...(run.options.actionTypes.length > 0 ? { actionTypes: run.options.actionTypes } : {}),
    },
    { limit: pageSize, prefetch: run.options.concurrency, budget: run.pageBudget, signal: run.signal },
  );
  for await (const page of pages) {
    await run.write({
      records: page.records,
      body: page.body,
      requestPath: page.requestPath,
      dayRange: { from: day, to: day },
      listedDay: day,
    });
  }
  await run.flush();
}

async function recordDay(run: SyncRun, day: string, serverTotal: number): Promise<void> {
  const count = (await localCountsByDay(run.store, day, day, run.options.actionTypes)).get(day);
  await recordDays(run, [
    {
      day,
      serverTotal,
      localCount: count?.held ?? 0,
      quarantinedCount: count?.quarantined ?? 0,
      dayClosed: serverDayClosed(day, run.now(), await latestServerOffset(run)),
    },
  ]);
}

async function settleDay(
  run: SyncRun,
  day: string,
  serverTotal: number,
  pageSize: number,
  later: { day: string; serverTotal: number }[],
): Promise<void> {
  const held = async () => (await localCountsByDay(run.store, day, day, run.options.actionTypes)).get(day);
  const local = (await held())?.held ?? 0;
  // More held than the server lists: a record the server files under a neighbouring day, which that
  // day's re-read will show. Judged once every day of this check is settled.
  if (local > serverTotal) {
    later.push({ day, serverTotal });
    return;
  }
  // A repair at this very server total already ended with this local count: reading the day again
  // would change nothing (and would repeat on every run). The gap stays reported.
  const previous = await readCoverage(run.store, run.filterKey, day);
  const repairedBefore = previous?.serverTotal === serverTotal && previous.localCount === local;
  if (local < serverTotal && !repairedBefore && run.options.repairGaps && !run.signal.aborted) {
    await repairDay(run, day, pageSize);
  }
  if (run.signal.aborted) return;
  await recordDay(run, day, serverTotal);
}

/** Compares a range with the server's total; halves it until the days that differ are found. */
async function settle(
  run: SyncRun,
  range: RangeToCheck,
  pageSize: number,
  later: { day: string; serverTotal: number }[],
): Promise<void> {
  if (run.signal.aborted) return;
  const serverTotal = range.serverTotal ?? (await probe(run, range.from, range.to));
  const local = await localCountForRange(run.store, range.from, range.to, run.options.actionTypes);
  const known = [...(await knownShortfalls(run.store, run.filterKey, range.from, range.to)).values()];
  if (local + known.reduce((a, b) => a + b, 0) === serverTotal) return recordMatchingRange(run, range);
  if (range.from === range.to) return settleDay(run, range.from, serverTotal, pageSize, later);
  const mid = addDays(range.from, Math.floor(daysBetween(range.from, range.to) / 2));
  const olderTotal = await probe(run, range.from, mid);
  // Records only arrive at the newest end while we look: the newer half's total by subtraction is
  // at most one probe old. A negative result means the server's counts moved: ask for it.
  const newerTotal = serverTotal - olderTotal;
  await settle(run, { from: range.from, to: mid, serverTotal: olderTotal }, pageSize, later);
  await settle(
    run,
    { from: addDays(mid, 1), to: range.to, ...(newerTotal >= 0 ? { serverTotal: newerTotal } : {}) },
    pageSize,
    later,
  );
}

/** Contiguous runs of days (sorted, unique) as ranges. */
function contiguousRanges(days: readonly string[]): RangeToCheck[] {
  const sorted = [...new Set(days)].sort();
  const ranges: RangeToCheck[] = [];
  for (const day of sorted) {
    const last = ranges.at(-1);
    if (last && addDays(last.to, 1) === day) last.to = day;
    else ranges.push({ from: day, to: day });
  }
  return ranges;
}

/**
 * Each owed range reaches back over the unbroken run of days checked before it: the same one request
 * then also proves that no late or back-dated record appeared anywhere in that history.
 */
async function withCheckedHistory(run: SyncRun, ranges: RangeToCheck[]): Promise<RangeToCheck[]> {
  const merged: RangeToCheck[] = [];
  for (const range of ranges) {
    const from = await checkedRunStart(run.store, run.filterKey, range.from);
    const previous = merged.at(-1);
    if (previous && from <= addDays(previous.to, 1)) previous.to = range.to;
    else merged.push({ from, to: range.to });
  }
  return merged;
}

/**
 * Checks the days this run owes: those of its plans not already checked by window counts, days an
 * earlier run left (stopped during coverage, or still open then), and windows whose counts disagreed.
 */
export async function checkCoverage(
  run: SyncRun,
  mismatches: readonly RangeToCheck[],
  pageSize: number,
): Promise<number> {
  const owed = [
    ...(await readPendingCoverageDays(run.store, run.filterKey)),
    ...(await openCoverageDays(run.store, run.filterKey)),
  ].filter((d) => !run.checkedDays.has(d));
  const mismatchDays = new Set(mismatches.flatMap((m) => eachDay(m.from, m.to)));
  const owedRanges = await withCheckedHistory(
    run,
    contiguousRanges(owed.filter((d) => !mismatchDays.has(d))),
  );
  const ranges = [...mismatches, ...owedRanges];
  let done = 0;
  const later: { day: string; serverTotal: number }[] = [];
  await runPool(
    ranges,
    run.options.concurrency,
    async (range) => {
      await settle(run, range, pageSize, later);
      done += 1;
      run.progress("coverage", done, ranges.length);
    },
    run.signal,
  );
  if (!run.signal.aborted) for (const d of later) await recordDay(run, d.day, d.serverTotal);
  return run.checkedDays.size;
}
