// The sync engine: under the "sync" lease and a sync_runs row, it settles the page size, executes its
// plans (windows of explicit startDate/endDate, paged newest first, written in batches together with
// their progress), then checks coverage by count. A run killed at any instant resumes from the stored
// plan: finished windows and committed pages are not read again.
import type { ConsoleClient } from "../api/client.ts";
import { refusedWrite } from "../chainChecks.ts";
import type { LockedError } from "../errors.ts";
import { startHeartbeat } from "../heartbeat.ts";
import {
  acquireLease,
  backfillRuleDiffs,
  dropPlanIf,
  finishBulkLoad,
  finishRun,
  leaseHolder,
  markOrphanRunsInterrupted,
  releaseLease,
  renewLease,
  runCounterColumns,
  type Store,
  startRun,
} from "../store/syncStore.ts";
import { checkCoverage } from "./coverage.ts";
import { type EntitySummary, syncEntities } from "./entities.ts";
import {
  type ResolvedSyncOptions,
  resolveSyncOptions,
  type SyncOptions,
  type SyncSummary,
} from "./options.ts";
import { resolvePageSize } from "./pageSize.ts";
import { filterKeyFor } from "./plan.ts";
import { planUntouched } from "./planEnd.ts";
import { choosePlans } from "./planning.ts";
import { SyncRun } from "./run.ts";
import { executePlan, type RangeToCheck } from "./windows.ts";

export type { SyncEvent, SyncOptions, SyncSummary } from "./options.ts";

const SYNC_LEASE = "sync";

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Takes the lease and opens the run's row; a refused sync leaves no trace at all. */
async function startUnderLease(store: Store, o: ResolvedSyncOptions, filterKey: string, startedAt: number) {
  const holder = o.holder ?? leaseHolder("sync");
  await acquireLease(store, SYNC_LEASE, holder, o.leaseTtlMs, startedAt);
  try {
    await markOrphanRunsInterrupted(store, startedAt);
    const runId = await startRun(store, {
      filterKey,
      now: startedAt,
      params: {
        since: o.since ?? null,
        until: o.until,
        actionTypes: o.actionTypes,
        pageSize: o.pageSize ?? null,
        concurrency: o.concurrency,
        lookbackDays: o.lookbackDays,
        full: o.full,
        windowDays: o.windowDays,
      },
    });
    return { holder, runId };
  } catch (error) {
    await releaseLease(store, SYNC_LEASE, holder);
    throw error;
  }
}

/**
 * Keeps the lease alive; losing it (another holder has it, or the TTL passed without a renewal) stops the
 * run: another process may now write. A renewal that fails transiently (busy) is tried at the next beat.
 */
function keepLease(store: Store, o: ResolvedSyncOptions, holder: string, controller: AbortController) {
  const state: { lost?: LockedError } = {};
  const heartbeat = startHeartbeat({
    renew: () => renewLease(store, SYNC_LEASE, holder, o.leaseTtlMs, o.now()),
    ttlMs: o.leaseTtlMs,
    now: o.now,
    onLost: (error) => {
      state.lost = error;
      controller.abort(error);
    },
  });
  return { state, stop: heartbeat.stop };
}

type Parts = {
  resumed: boolean;
  windows: number;
  pageSize: number;
  entities: EntitySummary | null;
  /** The plans' ranges as each starts: an interrupted run (runParts throws) still names what it read. */
  ranges: { since: string; until: string }[];
};

/** The run's parts in order: page size, plans, coverage, entity history (only that when asked alone). */
async function runParts(run: SyncRun, summary: Parts) {
  if (run.options.entitiesOnly) {
    summary.entities = await syncEntities(run);
    return;
  }
  // A bulk load killed half-way gets its indexes now; an older store's diffs catch up, so that the
  // rule-diff mark advances with every batch after this.
  await finishBulkLoad(run.store);
  await backfillRuleDiffs(run.store);
  summary.pageSize = await resolvePageSize(run);
  const { plans, resumed } = await choosePlans(run, summary.pageSize);
  summary.resumed = resumed;
  const mismatches: RangeToCheck[] = [];
  const ranges = summary.ranges;
  for (const next of plans) {
    if (run.signal.aborted) break;
    const plan = await next();
    ranges.push({ since: plan.since, until: plan.until });
    await executePlan(run, plan, mismatches, summary);
  }
  if (!run.signal.aborted && run.options.coverage) await checkCoverage(run, mismatches, summary.pageSize);
  // After the audit part: which entities to read is decided from the records now stored.
  summary.entities = await syncEntities(run);
}

/**
 * One sync of `store` through `client`. LockedError (nothing written) when another sync holds the lease.
 * Aborting `signal` stops issuing requests; what was fetched commits and the run is marked interrupted.
 * Failures (API errors after retries, auth) mark the run failed and are rethrown.
 */
export async function runSync(
  store: Store,
  client: ConsoleClient,
  options: SyncOptions = {},
  signal?: AbortSignal,
): Promise<SyncSummary> {
  const o = resolveSyncOptions(options);
  const startedAt = o.now();
  const filterKey = filterKeyFor(o.actionTypes);
  const { holder, runId } = await startUnderLease(store, o, filterKey, startedAt);

  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const lease = keepLease(store, o, holder, controller);
  const run = new SyncRun(store, client, o, runId, filterKey, controller.signal);
  const parts: Parts = { resumed: false, windows: 0, pageSize: o.pageSize ?? 0, entities: null, ranges: [] };

  const finish = async (outcome: "ok" | "interrupted" | "failed", error: string | null) => {
    run.refreshClientStats();
    await finishRun(store, runId, outcome, run.counters, error, o.now());
  };
  try {
    await runParts(run, parts);
    if (lease.state.lost) throw lease.state.lost;
    const outcome = controller.signal.aborted ? "interrupted" : "ok";
    await finish(outcome, outcome === "interrupted" ? "stopped by request" : null);
    return summarize(run, outcome, parts, startedAt);
  } catch (error) {
    if (signal?.aborted && !lease.state.lost) {
      await finish("interrupted", "stopped by request");
      return summarize(run, "interrupted", parts, startedAt);
    }
    // A break found before a write is the sync's refusal: it says so (src/chainChecks.ts).
    const failure = lease.state.lost ?? refusedWrite(error);
    // A run that failed before its plan read anything (a rejected key, the server down) leaves no plan.
    if (!lease.state.lost) await dropPlanIf(store, filterKey, planUntouched);
    await finish("failed", describeError(failure));
    throw failure;
  } finally {
    lease.stop();
    signal?.removeEventListener("abort", onAbort);
    await releaseLease(store, SYNC_LEASE, holder);
  }
}

function summarize(
  run: SyncRun,
  outcome: "ok" | "interrupted",
  parts: Parts,
  startedAt: number,
): SyncSummary {
  const ranges = parts.ranges;
  const until = run.options.until;
  const since = ranges.reduce((min, r) => (r.since < min ? r.since : min), ranges[0]?.since ?? until);
  const upper = ranges.reduce((max, r) => (r.until > max ? r.until : max), ranges[0]?.until ?? until);
  const c = run.counters;
  return {
    runId: run.runId,
    outcome,
    filterKey: run.filterKey,
    actionTypes: run.options.actionTypes,
    range: { since, until: upper },
    resumed: parts.resumed,
    windows: parts.windows,
    pageSize: parts.pageSize,
    ...runCounterColumns(c),
    seconds: Math.round((run.now() - startedAt) / 100) / 10,
    coverageDays: run.checkedDays.size,
    coverageRequests: run.coverageRequests,
    // A day checked twice (adjacent windows share one) is reported as last seen.
    coverageGaps: [...new Map(run.gaps.map((g) => [g.day, g])).values()].sort((a, b) =>
      a.day.localeCompare(b.day),
    ),
    coverageOpenDays: [...new Set(run.openDays)].sort(),
    warningMessages: run.warningMessages,
    entities: parts.entities,
  };
}
