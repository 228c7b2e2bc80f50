// Which plans a run executes: an interrupted plan to finish, a new plan for this run's range, or both.
// An interrupted plan is resumed once; a run that names another range replaces it (and says so), its
// unread days then owed to coverage, which finds and re-reads whatever is missing.

import {
  addPendingCoverageDays,
  createPlan,
  oldestServerDay,
  readCheckpoint,
  readPlan,
  readWindows,
  type SyncPlan,
} from "../store/syncStore.ts";
import { addDays, eachDay, todayUtc } from "./days.ts";
import { planWindows } from "./plan.ts";
import type { SyncRun } from "./run.ts";

interface RangeChoice {
  since: string;
  /** latestID for the window holding the checkpoint's day (incremental runs). */
  latestId: string | null;
  /** The checkpoint's day, from which an incremental run reads with latestID. */
  incrementalFrom: string | null;
}

/** The range of a new plan: explicit, full, incremental from the checkpoint, or the default backfill. */
async function chooseRange(run: SyncRun): Promise<RangeChoice> {
  const o = run.options;
  const checkpoint = o.full ? undefined : await readCheckpoint(run.store, run.filterKey);
  if (o.since !== undefined) return { since: o.since, latestId: null, incrementalFrom: null };
  if (checkpoint) {
    const day =
      checkpoint.serverDay ??
      (checkpoint.latestOccurredAt !== null ? todayUtc(checkpoint.latestOccurredAt) : null);
    if (day !== null) {
      const from = day > o.until ? o.until : day;
      return { since: addDays(from, -o.lookbackDays), latestId: checkpoint.latestId, incrementalFrom: from };
    }
  }
  if (o.full) {
    const oldest = await oldestServerDay(run.store);
    const since = oldest && oldest < o.until ? oldest : addDays(o.until, -o.backfillDays);
    run.emit({ type: "notice", message: `Full re-read from ${since} to ${o.until}.` });
    return { since, latestId: null, incrementalFrom: null };
  }
  const since = addDays(o.until, -o.backfillDays);
  const why = checkpoint
    ? "The checkpoint record's day is unknown (its date could not be read)"
    : "No checkpoint for this filter set";
  run.emit({
    type: "notice",
    message: `${why}: syncing the last ${o.backfillDays} days (${since} to ${o.until}). Give --since YYYY-MM-DD for older history.`,
  });
  return { since, latestId: null, incrementalFrom: null };
}

/** Creates and stores the plan of this run's own range. */
async function newPlan(run: SyncRun, pageSize: number): Promise<SyncPlan> {
  const o = run.options;
  const range = await chooseRange(run);
  const plan: SyncPlan = {
    filterKey: run.filterKey,
    actionTypes: o.actionTypes,
    since: range.since,
    until: o.until,
    pageSize,
    latestId: range.latestId,
    latestIdWindowStart: null,
    headId: null,
    headOccurredAt: null,
    headFetched: false,
    startedAt: run.now(),
    runId: run.runId,
  };
  let windows = planWindows(plan.since, plan.until, o.windowDays);
  if (range.latestId !== null && range.incrementalFrom !== null) {
    // [checkpoint day, until] with latestID: only records newer than the checkpoint. The lookback days
    // before it are checked by count when coverage is on (a late or back-dated record shows as a gap
    // and is re-read); without coverage they are re-read whole, WITHOUT latestID, which would hide them.
    const incremental = planWindows(range.incrementalFrom, plan.until, o.windowDays);
    plan.latestIdWindowStart = incremental.at(-1)?.startDate ?? null;
    const lookback =
      !o.coverage && plan.since < range.incrementalFrom
        ? planWindows(plan.since, range.incrementalFrom, o.windowDays)
        : [];
    windows = [...incremental, ...lookback];
  }
  await createPlan(run.store, plan, windows, run.now());
  return plan;
}

/** The plans to execute, in order, and whether an interrupted one is among them. */
export async function choosePlans(
  run: SyncRun,
  pageSize: number,
): Promise<{ plans: (() => Promise<SyncPlan>)[]; resumed: boolean }> {
  const o = run.options;
  const interrupted = await readPlan(run.store, run.filterKey);
  const fresh = () => newPlan(run, pageSize);
  if (!interrupted || o.full) return { plans: [fresh], resumed: false };
  const resume = async () => {
    run.emit({
      type: "notice",
      message: `Resuming the interrupted sync of ${interrupted.since} to ${interrupted.until}.`,
    });
    return interrupted;
  };
  if (!o.explicitRange) return { plans: [resume, fresh], resumed: true };
  const sameRange = interrupted.since === (o.since ?? interrupted.since) && interrupted.until === o.until;
  if (sameRange) return { plans: [resume], resumed: true };
  // Another explicit range: this run's range wins. The interrupted plan's unread days stay owed to
  // coverage, which re-reads whatever is missing from them.
  const unread = (await readWindows(run.store, run.filterKey))
    .filter((w) => w.status === "pending")
    .flatMap((w) => eachDay(w.startDate, w.endDate));
  if (o.coverage) await addPendingCoverageDays(run.store, run.filterKey, unread, run.now());
  run.emit({
    type: "notice",
    message:
      `An interrupted sync of ${interrupted.since} to ${interrupted.until} is replaced by this run's range` +
      (o.coverage ? "; its unread days are checked by coverage." : "."),
  });
  return { plans: [fresh], resumed: false };
}
