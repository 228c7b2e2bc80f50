// What one sync run carries from part to part: the store, the client, the page budget all its reads
// share (at most `concurrency` pages requested or waiting), the run's counters and events, and the batch
// writer every fetched page goes through. One object passed explicitly instead of closures over shared variables.
import type { ClientStats, ConsoleClient } from "../api/client.ts";
import { prepareRecords } from "../records/prepare.ts";
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
  /** Records in batches handed to a commit that has not finished yet. */
  private committingRecords = 0;
  /** The last batch's commit: each waits for the one before it (never rejects; see `failure`). */
  private writes: Promise<void> = Promise.resolve();
  /** The first commit that failed: no batch commits after it, and every later write rethrows it. */
  private failure: { error: unknown } | undefined;
  /**
   * PostgreSQL commits on the server: the next batch is prepared while one commits. SQLite commits on
   * this thread, so there is nothing to overlap and a batch's commit is awaited as before.
   */
  private readonly overlapCommits: boolean;
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
    this.overlapCommits = store.engine === "postgres";
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
      fetched: this.counters.fetched + this.committingRecords + this.pendingRecords,
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

  /**
   * Queues a fetched page; the batch commits once it is large or old enough. Commits keep the pages'
   * order: on PostgreSQL the caller goes on while the batch commits, and waits only for the commit
   * before it (at most one batch commits while the next is built).
   */
  async write(page: FetchedPage): Promise<void> {
    this.throwIfFailed();
    if (this.pending.length === 0) this.pendingSince = this.now();
    // Validation, hashing and rule diffs as each page arrives, between network waits; the batch's
    // transaction then only writes. The parsed records are dropped here: the batch keeps strings.
    const { records, body, ...rest } = page;
    this.pending.push({ ...rest, prepared: prepareRecords(records, this.options.parseTime, body) });
    this.pendingRecords += records.length;
    const { batchRecords, batchMs } = this.options;
    if (this.pendingRecords < batchRecords && this.now() - this.pendingSince < batchMs) return;
    const previous = this.writes;
    const committed = this.commitPending();
    await (this.overlapCommits ? previous : committed);
    this.throwIfFailed();
  }

  /** Commits every queued page and waits for every commit; rethrows a commit's failure. */
  async flush(): Promise<void> {
    this.commitPending();
    await this.writes;
    this.throwIfFailed();
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  /**
   * Hands the queued pages to a commit after the ones already started (commits never overlap). A batch
   * whose turn comes after a failed commit is not written: its pages would move windows past pages
   * that were never stored.
   */
  private commitPending(): Promise<void> {
    const pages = this.pending;
    const records = this.pendingRecords;
    this.pending = [];
    this.pendingRecords = 0;
    if (pages.length === 0) return this.writes;
    this.committingRecords += records;
    const done = this.writes.then(async () => {
      try {
        if (!this.failure) await this.commit(pages);
      } catch (error) {
        this.failure ??= { error };
      } finally {
        this.committingRecords -= records;
      }
    });
    this.writes = done;
    return done;
  }

  private async commit(pages: BatchPage[]): Promise<void> {
    this.refreshClientStats();
    const result = await commitSyncBatch(this.store, {
      plan: this.plan,
      runId: this.runId,
      pages,
      counters: this.counters,
      now: this.now(),
      signingKey: this.options.signingKey,
      previousSigningKey: this.options.previousSigningKey,
    });
    this.counters = { ...result.counters };
    this.plan = result.plan;
    for (const message of result.warningMessages) {
      if (this.warningMessages.length < MAX_WARNING_MESSAGES) this.warningMessages.push(message);
      this.emit({ type: "warning", message });
    }
  }
}
