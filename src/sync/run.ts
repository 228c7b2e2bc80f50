// What one sync run carries from part to part: the store, the client, the page budget all its reads
// share (at most `concurrency` pages requested or waiting), the run's counters and events, and the batch
// writer every fetched page goes through. One object passed explicitly instead of closures over shared variables.
import type { ClientStats, ConsoleClient } from "../api/client.ts";
import {
  type BatchPage,
  commitSyncBatch,
  emptyCounts,
  type RunCounters,
  type Store,
  type SyncPlan,
} from "../store/syncStore.ts";
import type { CoverageGap, ResolvedSyncOptions, SyncEvent } from "./options.ts";
import { Slots } from "./pool.ts";
import { prepareRecords } from "./prepareRecords.ts";

const MAX_WARNING_MESSAGES = 20;

/** A page as fetched: the batch writer prepares its records on arrival. */
export type FetchedPage = Omit<BatchPage, "prepared"> & {
  records: readonly unknown[];
  /** The response's JSON text: the records' raw texts are cut from it. */
  body?: string | undefined;
};

export class SyncRun {
  /** Pages in flight or waiting their turn, across all of the run's reads (bounds memory too). */
  readonly pageBudget: Slots;
  counters: RunCounters = { ...emptyCounts(), requests: 0, throttled: 0, retries: 0 };
  readonly warningMessages: string[] = [];
  /** Days whose coverage this run has written (their pending mark is gone too). */
  readonly checkedDays = new Set<string>();
  readonly gaps: CoverageGap[] = [];
  readonly openDays: string[] = [];
  coverageRequests = 0;
  private readonly statsAtStart: ClientStats;
  private pending: BatchPage[] = [];
  private pendingRecords = 0;
  private pendingSince = 0;
  private writes: Promise<unknown> = Promise.resolve();
  /** The plan whose pages are being written (the batch writer keeps its head current). */
  plan: SyncPlan | null = null;
  private lastStep: { phase: "windows" | "coverage"; done: number; total: number } | undefined;

  constructor(
    readonly store: Store,
    readonly client: ConsoleClient,
    readonly options: ResolvedSyncOptions,
    readonly runId: number,
    readonly filterKey: string,
    readonly signal: AbortSignal,
  ) {
    this.pageBudget = new Slots(options.concurrency);
    this.statsAtStart = client.stats();
  }

  now(): number {
    return this.options.now();
  }

  emit(event: SyncEvent): void {
    this.options.onEvent?.(event);
  }

  progress(phase: "windows" | "coverage", done: number, total: number): void {
    this.lastStep = { phase, done, total };
    this.emit({
      type: "progress",
      phase,
      done,
      total,
      // Received so far, committed or still in the batch being built.
      fetched: this.counters.fetched + this.pendingRecords,
      inserted: this.counters.inserted,
    });
  }

  /** The phase's last step again, with the counters as they are now (after each stored page). */
  pageStored(): void {
    if (this.lastStep) this.progress(this.lastStep.phase, this.lastStep.done, this.lastStep.total);
  }

  /** Requests, 429s and retries since the run began, from the client's own counters. */
  refreshClientStats(): void {
    const stats = this.client.stats();
    this.counters.requests = stats.requests - this.statsAtStart.requests;
    this.counters.throttled = stats.throttled - this.statsAtStart.throttled;
    this.counters.retries = stats.retries - this.statsAtStart.retries;
  }

  /** Queues a fetched page; the batch commits once it is large or old enough. */
  async write(page: FetchedPage): Promise<void> {
    if (this.pending.length === 0) this.pendingSince = this.now();
    // Validation, hashing and rule diffs as each page arrives, between network waits; the batch's
    // transaction then only writes. The parsed records are dropped here: the batch keeps strings.
    const { records, body, ...rest } = page;
    this.pending.push({ ...rest, prepared: prepareRecords(records, this.options.parseTime, body) });
    this.pendingRecords += records.length;
    const { batchRecords, batchMs } = this.options;
    if (this.pendingRecords >= batchRecords || this.now() - this.pendingSince >= batchMs) await this.flush();
  }

  /** Commits every queued page (in order; commits never overlap). */
  flush(): Promise<void> {
    const pages = this.pending;
    this.pending = [];
    this.pendingRecords = 0;
    const done = this.writes.then(async () => {
      if (pages.length === 0) return;
      this.refreshClientStats();
      const result = await commitSyncBatch(this.store, {
        plan: this.plan,
        runId: this.runId,
        pages,
        counters: this.counters,
        now: this.now(),
        signingKey: this.options.signingKey,
      });
      this.counters = { ...result.counters };
      this.plan = result.plan;
      for (const message of result.warningMessages) {
        if (this.warningMessages.length < MAX_WARNING_MESSAGES) this.warningMessages.push(message);
        this.emit({ type: "warning", message });
      }
    });
    this.writes = done.catch(() => undefined);
    return done;
  }
}
