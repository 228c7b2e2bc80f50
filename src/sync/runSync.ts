// The sync engine: plans date windows for a filter set, pages each window newest-first with explicit
// startDate/endDate, stores every page in one transaction with its progress, then records coverage.
// A run killed at any instant resumes from the stored plan: finished windows are not read again.

import { parseAuditTime } from "../api/auditTime.ts";
import type { AuditLogPage, AuditLogQuery, ConsoleClient } from "../api/client.ts";
import { FlagtrailError, LockedError, UsageError } from "../errors.ts";
import { acquireLease, leaseHolder, releaseLease, renewLease } from "../store/leases.ts";
import type { Store } from "../store/open.ts";
import {
  addPendingCoverageDays,
  advanceWindow,
  createPlan,
  dropPlan,
  fillQuarantineServerDays,
  finishRun,
  localCountForDay,
  markOrphanRunsInterrupted,
  newestRecordTimeTexts,
  newestStoredRecord,
  openCoverageDays,
  type RunCounters,
  readCheckpoint,
  readCoverage,
  readPendingCoverageDays,
  readPlan,
  readWindows,
  removePendingCoverageDay,
  type SyncPlan,
  type SyncWindow,
  savePlan,
  startRun,
  updateRunCounters,
  writeCheckpoint,
  writeCoverage,
} from "../store/syncState.ts";
import {
  addCounts,
  createRecordWriter,
  emptyCounts,
  type PageWriteResult,
  serverDayOfDateText,
  type TimeParser,
} from "../store/writes.ts";
import { addDays, defaultUntil, eachDay, isDay, serverDayClosed, todayUtc } from "./days.ts";
import { SYNC_DEFAULTS } from "./defaults.ts";
import { filterKeyFor, planWindows } from "./plan.ts";
import { runPool } from "./pool.ts";

export const SYNC_LEASE = "sync";

export { SYNC_DEFAULTS };

export interface SyncOptions {
  since?: string | undefined;
  until?: string | undefined;
  actionTypes?: readonly string[] | undefined;
  pageSize?: number | undefined;
  concurrency?: number | undefined;
  lookbackDays?: number | undefined;
  /** Ignore the checkpoint and any interrupted plan: re-read the range. */
  full?: boolean | undefined;
  windowDays?: number | undefined;
  backfillDays?: number | undefined;
  /** Per-day server totals after the windows (default true). */
  coverage?: boolean | undefined;
  /** Re-read a day whose local count is below the server's total (default true). */
  repairGaps?: boolean | undefined;
  leaseTtlMs?: number | undefined;
  /** Lease holder id; defaults to this host/pid. */
  holder?: string | undefined;
  now?: (() => number) | undefined;
  parseTime?: TimeParser | undefined;
  onEvent?: ((event: SyncEvent) => void) | undefined;
}

export type SyncEvent =
  | { type: "notice"; message: string }
  | { type: "warning"; message: string }
  | {
      type: "progress";
      phase: "windows" | "coverage";
      done: number;
      total: number;
      fetched: number;
      inserted: number;
    };

export interface CoverageGap {
  day: string;
  local: number;
  server: number;
}

/** A run's counters (fetched, inserted, … requests, throttled) plus what the run covered. */
export interface SyncSummary extends RunCounters {
  runId: number;
  outcome: "ok" | "interrupted";
  filterKey: string;
  actionTypes: string[];
  /** The range read by this run (union of a resumed plan and the new one). */
  range: { since: string; until: string };
  resumed: boolean;
  windows: number;
  seconds: number;
  coverageDays: number;
  coverageGaps: CoverageGap[];
  /** Checked days whose server day had not ended yet: not final, checked again by the next sync. */
  coverageOpenDays: string[];
  /** The first warnings in full (the count is in `warnings`). */
  warningMessages: string[];
}

const MAX_WARNING_MESSAGES = 20;

function recordIdOf(raw: unknown): string | undefined {
  if (raw !== null && typeof raw === "object" && "id" in raw) {
    const id = (raw as { id: unknown }).id;
    if (typeof id === "string") return id;
  }
  return undefined;
}

function positiveInt(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) throw new UsageError(`--${name} must be an integer >= ${min}.`);
  return v;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One sync of `store` through `client`. Takes the "sync" lease (LockedError, nothing written, when
 * another sync holds it), records a sync_runs row, and returns the summary. Aborting `signal` stops
 * issuing requests; the page being written commits and the run is marked interrupted.
 * Failures (API errors after retries, auth) mark the run failed and are rethrown.
 */
export async function runSync(
  store: Store,
  client: ConsoleClient,
  options: SyncOptions = {},
  signal?: AbortSignal,
): Promise<SyncSummary> {
  const clock = options.now ?? Date.now;
  const startedAt = clock();
  const actionTypes = [...new Set(options.actionTypes ?? [])].sort();
  const filterKey = filterKeyFor(actionTypes);
  const pageSize = positiveInt("page-size", options.pageSize, SYNC_DEFAULTS.pageSize);
  const concurrency = positiveInt("concurrency", options.concurrency, SYNC_DEFAULTS.concurrency);
  const lookbackDays = positiveInt("lookback-days", options.lookbackDays, SYNC_DEFAULTS.lookbackDays, 0);
  const windowDays = positiveInt("window-days", options.windowDays, SYNC_DEFAULTS.windowDays);
  const backfillDays = positiveInt("backfill-days", options.backfillDays, SYNC_DEFAULTS.backfillDays);
  const leaseTtlMs = positiveInt("lease-ttl", options.leaseTtlMs, SYNC_DEFAULTS.leaseTtlMs, 1000);
  const until = options.until ?? defaultUntil(startedAt);
  if (!isDay(until)) throw new UsageError(`--until must be a date YYYY-MM-DD, got ${JSON.stringify(until)}.`);
  if (options.since !== undefined) {
    if (!isDay(options.since)) {
      throw new UsageError(`--since must be a date YYYY-MM-DD, got ${JSON.stringify(options.since)}.`);
    }
    if (options.since > until) throw new UsageError(`--since ${options.since} is after --until ${until}.`);
  }
  const emit = (event: SyncEvent) => options.onEvent?.(event);

  // The lease comes first: a refused sync must leave no trace at all.
  const holder = options.holder ?? leaseHolder("sync");
  acquireLease(store, SYNC_LEASE, holder, leaseTtlMs, startedAt);
  let runId: number;
  try {
    markOrphanRunsInterrupted(store, startedAt);
    runId = startRun(store, {
      filterKey,
      now: startedAt,
      params: {
        since: options.since ?? null,
        until,
        actionTypes,
        pageSize,
        concurrency,
        lookbackDays,
        full: options.full ?? false,
        windowDays,
      },
    });
  } catch (error) {
    releaseLease(store, SYNC_LEASE, holder);
    throw error;
  }

  const writer = createRecordWriter(store, options.parseTime ? { parseTime: options.parseTime } : {});
  const statsAtStart = client.stats();
  const counters: RunCounters = { ...emptyCounts(), requests: 0, throttled: 0 };
  const refreshClientStats = () => {
    const stats = client.stats();
    counters.requests = stats.requests - statsAtStart.requests;
    counters.throttled = stats.throttled - statsAtStart.throttled;
  };
  const warningMessages: string[] = [];
  const coverageGaps: CoverageGap[] = [];
  const coverageOpenDays: string[] = [];
  const ranges: { since: string; until: string }[] = [];
  let windowsTotal = 0;
  let windowsDone = 0;
  let resumed = false;

  // Internal stop: the caller's signal, or a lost lease.
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let leaseLost: LockedError | undefined;
  const renewTimer = setInterval(
    () => {
      try {
        renewLease(store, SYNC_LEASE, holder, leaseTtlMs, clock());
      } catch (error) {
        leaseLost = error instanceof LockedError ? error : new LockedError(describeError(error));
        controller.abort(leaseLost);
      }
    },
    Math.max(250, Math.floor(leaseTtlMs / 3)),
  );
  renewTimer.unref();

  const selectOccurredAt = store.sqlite
    .prepare<[string], number | null>("SELECT occurred_at FROM audit_logs WHERE id = ?")
    .pluck();

  const onPage = (result: PageWriteResult) => {
    for (const message of result.warningMessages) {
      if (warningMessages.length < MAX_WARNING_MESSAGES) warningMessages.push(message);
      emit({ type: "warning", message });
    }
  };

  /** Pages one window from its stored next page until a stop condition; progress commits per page. */
  async function fetchWindow(plan: SyncPlan, window: SyncWindow, isNewest: boolean, stop: AbortSignal) {
    const useLatestId = plan.latestId !== null && window.startDate === plan.latestIdWindowStart;
    const sizePage = pageSizer(plan.pageSize);
    let page = window.nextPage;
    let maxTotal = 0;
    while (!stop.aborted) {
      const query: AuditLogQuery = {
        startDate: window.startDate,
        endDate: window.endDate,
        page,
        limit: plan.pageSize,
        sortOrder: "desc",
        ...(plan.actionTypes.length > 0 ? { actionTypes: plan.actionTypes } : {}),
        ...(useLatestId && plan.latestId !== null ? { latestID: plan.latestId } : {}),
      };
      const response = await client.listAuditLogs(query, stop);
      refreshClientStats();
      const perPage = sizePage(response, page);
      const count = response.records.length;
      maxTotal = Math.max(maxTotal, response.pagination.totalItems);
      const reachedCheckpoint =
        useLatestId && response.records.some((record) => recordIdOf(record) === plan.latestId);
      // Only inserts can shift a newest-first list, and they push unseen records to later pages,
      // never earlier ones: stopping on an empty page or past totalItems loses nothing.
      const last = count === 0 || page * perPage >= response.pagination.totalItems || reachedCheckpoint;
      if (!last && page > Math.ceil(maxTotal / perPage) + 10) {
        throw new FlagtrailError(
          `The server kept returning full pages past its totalItems (${maxTotal}) for ${window.startDate}..${window.endDate}; stopping.`,
        );
      }
      const now = clock();
      const result = writer.writePage(
        response.records,
        { syncRunId: runId, requestPath: response.requestPath, now },
        (pageResult) => {
          addCounts(counters, pageResult);
          advanceWindow(store, plan.filterKey, window, { nextPage: page + 1, done: last, runId, now });
          if (isNewest && page === 1 && !plan.headFetched) {
            // The newest record of the plan becomes the next checkpoint once the plan completes.
            const first = pageResult.outcomes.find((o) => o.kind !== "quarantined");
            const headId = first?.id ?? null;
            const updated: SyncPlan = {
              ...plan,
              headFetched: true,
              headId,
              headOccurredAt: headId === null ? null : (selectOccurredAt.get(headId) ?? null),
            };
            savePlan(store, updated, now);
            Object.assign(plan, updated);
          }
          updateRunCounters(store, runId, counters);
        },
      );
      onPage(result);
      if (last) break;
      page += 1;
    }
    if (!stop.aborted) {
      windowsDone += 1;
      emit({
        type: "progress",
        phase: "windows",
        done: windowsDone,
        total: windowsTotal,
        fetched: counters.fetched,
        inserted: counters.inserted,
      });
    }
  }

  async function executePlan(plan: SyncPlan, stop: AbortSignal): Promise<boolean> {
    const windows = readWindows(store, plan.filterKey);
    const newestStart = windows[0]?.startDate;
    const pending = windows.filter((w) => w.status === "pending");
    windowsTotal += windows.length;
    windowsDone += windows.length - pending.length;
    ranges.push({ since: plan.since, until: plan.until });
    await runPool(
      pending,
      concurrency,
      (window, poolSignal) => fetchWindow(plan, window, window.startDate === newestStart, poolSignal),
      stop,
    );
    if (stop.aborted) return false;
    // Plan done: move the checkpoint and forget the windows, in one transaction.
    store.sqlite
      .transaction(() => {
        const current = readCheckpoint(store, plan.filterKey);
        if (plan.headId !== null && shouldAdvance(plan, current?.latestOccurredAt, current !== undefined)) {
          writeCheckpoint(store, {
            filterKey: plan.filterKey,
            latestId: plan.headId,
            latestOccurredAt: plan.headOccurredAt,
            runId,
            now: clock(),
          });
        } else if (plan.headId === null) {
          // The newest window's first page was empty (no activity lately) or all quarantined: the
          // newest record stored for the plan's range is the head, if it is newer than the checkpoint.
          const newest = newestStoredRecord(store, plan.since, plan.until, plan.actionTypes);
          const newer =
            current === undefined ||
            (newest?.occurredAt != null &&
              current.latestOccurredAt !== null &&
              newest.occurredAt > current.latestOccurredAt);
          if (newest && newer) {
            writeCheckpoint(store, {
              filterKey: plan.filterKey,
              latestId: newest.id,
              latestOccurredAt: newest.occurredAt,
              runId,
              now: clock(),
            });
          }
        }
        dropPlan(store, plan.filterKey);
        // The plan's days still owe their coverage: remembered with the plan's end, so that a run
        // stopped during the coverage phase leaves them to the next run.
        if (options.coverage !== false) {
          addPendingCoverageDays(store, plan.filterKey, eachDay(plan.since, plan.until), clock());
        }
      })
      .immediate();
    return true;
  }

  /** The first day read with latestID on an incremental plan (the checkpoint's day). */
  let incrementalFrom = null as string | null;

  function newPlan(): SyncPlan {
    const checkpoint = options.full ? undefined : readCheckpoint(store, filterKey);
    let since = options.since;
    let latestId: string | null = null;
    if (since === undefined && checkpoint) {
      const checkpointDay =
        checkpoint.serverDay ??
        (checkpoint.latestOccurredAt !== null ? todayUtc(checkpoint.latestOccurredAt) : null);
      if (checkpointDay !== null) {
        // Lookback days before the checkpoint's day are re-read whole (see planIncremental).
        incrementalFrom = checkpointDay > until ? until : checkpointDay;
        since = addDays(incrementalFrom, -lookbackDays);
        latestId = checkpoint.latestId;
      }
    }
    if (since === undefined && options.full) {
      const oldest = store.sqlite
        .prepare<[], string | null>("SELECT min(server_day) FROM audit_logs")
        .pluck()
        .get();
      since = oldest && oldest < until ? oldest : addDays(until, -backfillDays);
      emit({ type: "notice", message: `Full re-read from ${since} to ${until}.` });
    }
    if (since === undefined) {
      since = addDays(until, -backfillDays);
      const why = checkpoint
        ? "The checkpoint record's day is unknown (its date could not be read)"
        : "No checkpoint for this filter set";
      emit({
        type: "notice",
        message: `${why}: syncing the last ${backfillDays} days (${since} to ${until}). Use --since for older history.`,
      });
    }
    return {
      filterKey,
      actionTypes,
      since,
      until,
      pageSize,
      latestId,
      latestIdWindowStart: null,
      headId: null,
      headOccurredAt: null,
      headFetched: false,
      startedAt,
      runId,
    };
  }

  const parseTime = options.parseTime ?? parseAuditTime;
  /** The server zone's offset in a record's time text, or null. */
  const offsetOf = (record: unknown): number | null => {
    if (record === null || typeof record !== "object") return null;
    const { date, time } = record as { date?: unknown; time?: unknown };
    if (typeof date !== "string" || typeof time !== "string") return null;
    return parseTime(date, time)?.offsetMinutes ?? null;
  };

  async function checkCoverage(stop: AbortSignal) {
    // Days read by this run, plus days an earlier run checked while the server's day was still open.
    const days = [
      ...new Set([
        ...ranges.flatMap((r) => eachDay(r.since, r.until)),
        ...readPendingCoverageDays(store, filterKey),
        ...openCoverageDays(store, filterKey),
      ]),
    ]
      .sort()
      .reverse();
    // Fallback offset for days without a record of their own (today, tomorrow): the newest record's.
    fillQuarantineServerDays(store, (raw) =>
      serverDayOfDateText(
        raw !== null && typeof raw === "object" ? (raw as { date?: unknown }).date : undefined,
      ),
    );
    const newest = newestRecordTimeTexts(store);
    const latestOffset = newest ? offsetOf({ date: newest.dateText, time: newest.timeText }) : null;
    let done = 0;
    await runPool(
      days,
      concurrency,
      async (day, poolSignal) => {
        const filter = actionTypes.length > 0 ? { actionTypes } : {};
        const probe = await client.listAuditLogs(
          { startDate: day, endDate: day, page: 1, limit: 1, sortOrder: "desc", ...filter },
          poolSignal,
        );
        refreshClientStats();
        // Judged at the probe's time: a day the server has not finished may still grow.
        const checkedAt = clock();
        const dayClosed = serverDayClosed(day, checkedAt, offsetOf(probe.records[0]) ?? latestOffset);
        const serverTotal = probe.pagination.totalItems;
        const held = () => {
          const counts = localCountForDay(store, day, actionTypes);
          return { total: counts.stored + counts.quarantined, quarantined: counts.quarantined };
        };
        let counts = held();
        let local = counts.total;
        // A repair at this very server total already ended with this local count: reading the day
        // again would change nothing (and would repeat on every run). The gap stays reported.
        const previous = readCoverage(store, filterKey, day);
        const repairedBefore = previous?.serverTotal === serverTotal && previous.localCount === local;
        if (local < serverTotal && !repairedBefore && options.repairGaps !== false && !poolSignal.aborted) {
          // Something is missing for that day (a late record, an interrupted read): read it whole.
          await repairDay(day, poolSignal);
          counts = held();
          local = counts.total;
        }
        if (poolSignal.aborted) return;
        store.sqlite
          .transaction(() => {
            writeCoverage(store, {
              filterKey,
              day,
              serverTotal,
              localCount: local,
              quarantinedCount: counts.quarantined,
              dayClosed,
              runId,
              now: clock(),
            });
            removePendingCoverageDay(store, filterKey, day, clock());
          })
          .immediate();
        if (local !== serverTotal) coverageGaps.push({ day, local, server: serverTotal });
        if (!dayClosed) coverageOpenDays.push(day);
        done += 1;
        emit({
          type: "progress",
          phase: "coverage",
          done,
          total: days.length,
          fetched: counters.fetched,
          inserted: counters.inserted,
        });
      },
      stop,
    );
    return days.length;
  }

  async function repairDay(day: string, stop: AbortSignal) {
    const sizePage = pageSizer(pageSize);
    for (let page = 1; !stop.aborted; page += 1) {
      const response = await client.listAuditLogs(
        {
          startDate: day,
          endDate: day,
          page,
          limit: pageSize,
          sortOrder: "desc",
          ...(actionTypes.length > 0 ? { actionTypes } : {}),
        },
        stop,
      );
      refreshClientStats();
      const perPage = sizePage(response, page);
      const result = writer.writePage(
        response.records,
        { syncRunId: runId, requestPath: response.requestPath, now: clock() },
        (pageResult) => {
          addCounts(counters, pageResult);
          updateRunCounters(store, runId, counters);
        },
      );
      onPage(result);
      const count = response.records.length;
      if (count === 0 || page * perPage >= response.pagination.totalItems) break;
      if (page > Math.ceil(response.pagination.totalItems / perPage) + 10) break;
    }
  }

  let coverageDays = 0;
  try {
    const stop = controller.signal;
    const interrupted = readPlan(store, filterKey);
    if (interrupted && !options.full) {
      resumed = true;
      emit({
        type: "notice",
        message: `Resuming the interrupted sync of ${interrupted.since} to ${interrupted.until}.`,
      });
      await executePlan(interrupted, stop);
    }
    if (!stop.aborted) {
      const plan = newPlan();
      let windows = planWindows(plan.since, plan.until, windowDays);
      if (plan.latestId !== null && incrementalFrom !== null) {
        // [checkpoint day, until] with latestID: only records newer than the checkpoint. The lookback
        // days [since, checkpoint day] WITHOUT it: latestID would hide late or back-dated records
        // placed before the checkpoint, which is what the lookback is there to catch.
        const incremental = planWindows(incrementalFrom, plan.until, windowDays);
        plan.latestIdWindowStart = incremental.at(-1)?.startDate ?? null;
        const lookback =
          plan.since < incrementalFrom ? planWindows(plan.since, incrementalFrom, windowDays) : [];
        windows = [...incremental, ...lookback];
      }
      createPlan(store, plan, windows, clock());
      await executePlan(plan, stop);
    }
    if (!stop.aborted && options.coverage !== false) coverageDays = await checkCoverage(stop);
    refreshClientStats();
    if (leaseLost) throw leaseLost;
    const outcome = stop.aborted ? "interrupted" : "ok";
    finishRun(
      store,
      runId,
      outcome,
      counters,
      outcome === "interrupted" ? "stopped by request" : null,
      clock(),
    );
    return summary(outcome);
  } catch (error) {
    refreshClientStats();
    if (signal?.aborted && !leaseLost) {
      finishRun(store, runId, "interrupted", counters, "stopped by request", clock());
      return summary("interrupted");
    }
    const failure = leaseLost ?? error;
    finishRun(store, runId, "failed", counters, describeError(failure), clock());
    throw failure;
  } finally {
    clearInterval(renewTimer);
    signal?.removeEventListener("abort", onAbort);
    releaseLease(store, SYNC_LEASE, holder);
  }

  function summary(outcome: "ok" | "interrupted"): SyncSummary {
    const since = ranges.reduce((min, r) => (r.since < min ? r.since : min), ranges[0]?.since ?? until);
    const upper = ranges.reduce((max, r) => (r.until > max ? r.until : max), ranges[0]?.until ?? until);
    return {
      runId,
      outcome,
      filterKey,
      actionTypes,
      range: { since, until: upper },
      resumed,
      windows: windowsTotal,
      fetched: counters.fetched,
      inserted: counters.inserted,
      duplicates: counters.duplicates,
      mutations: counters.mutations,
      quarantined: counters.quarantined,
      warnings: counters.warnings,
      requests: counters.requests,
      throttled: counters.throttled,
      seconds: Math.round((clock() - startedAt) / 100) / 10,
      coverageDays,
      coverageGaps: coverageGaps.sort((a, b) => a.day.localeCompare(b.day)),
      coverageOpenDays: coverageOpenDays.sort(),
      warningMessages,
    };
  }
}

/**
 * The page size of one paged read. The server may clamp `limit`: arithmetic uses the `itemsPerPage` it
 * reports, unless a page comes back shorter while `totalItems` says records remain after it — a clamp it
 * did not declare. From then on the size it actually used drives paging, so the read goes on instead of
 * ending on that short page.
 */
function pageSizer(requested: number): (response: AuditLogPage, page: number) => number {
  let undeclared = Number.POSITIVE_INFINITY;
  return (response, page) => {
    const reported = response.pagination.itemsPerPage > 0 ? response.pagination.itemsPerPage : requested;
    const perPage = Math.min(reported, undeclared);
    const count = response.records.length;
    if (count > 0 && count < perPage && (page - 1) * perPage + count < response.pagination.totalItems) {
      undeclared = count;
      return count;
    }
    return perPage;
  };
}

/**
 * Whether a finished plan's newest record may replace the checkpoint. An incremental plan (latestID)
 * only ever sees newer records; an explicit or full range must not move the checkpoint back in time.
 */
function shouldAdvance(
  plan: SyncPlan,
  currentOccurredAt: number | null | undefined,
  hasCurrent: boolean,
): boolean {
  if (!hasCurrent || plan.latestId !== null) return true;
  if (currentOccurredAt === null || currentOccurredAt === undefined) return true;
  return plan.headOccurredAt !== null && plan.headOccurredAt >= currentOccurredAt;
}
