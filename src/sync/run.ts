// What one sync run carries from part to part: the store, the client (at most `concurrency` requests in
// flight, whoever sends them), the run's counters and events, and the batch writer every fetched page
// goes through. One object passed explicitly instead of closures over shared variables.
import type { AuditLogPage, AuditLogQuery, ClientStats, ConsoleClient } from "../api/client.ts";
import type { Store } from "../store/connection.ts";
import { type BatchPage, commitSyncBatch } from "../store/syncBatch.ts";
import type { RunCounters, SyncPlan } from "../store/syncState.ts";
import { emptyCounts } from "../store/writes.ts";
import type { CoverageGap, ResolvedSyncOptions, SyncEvent } from "./options.ts";

const MAX_WARNING_MESSAGES = 20;

/** A counting semaphore: the run's requests share `concurrency` slots. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(size: number) {
    this.free = size;
  }
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}

/** The client seen by the run's parts: every request takes one of the run's slots. */
function limitedClient(client: ConsoleClient, slots: Slots): ConsoleClient {
  return {
    listAuditLogs: (query: AuditLogQuery, signal?: AbortSignal): Promise<AuditLogPage> =>
      slots.run(() => {
        signal?.throwIfAborted();
        return client.listAuditLogs(query, signal);
      }),
    stats: () => client.stats(),
    close: () => client.close(),
  };
}

export class SyncRun {
  readonly client: ConsoleClient;
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

  constructor(
    readonly store: Store,
    client: ConsoleClient,
    readonly options: ResolvedSyncOptions,
    readonly runId: number,
    readonly filterKey: string,
    readonly signal: AbortSignal,
  ) {
    this.client = limitedClient(client, new Slots(options.concurrency));
    this.statsAtStart = client.stats();
  }

  now(): number {
    return this.options.now();
  }

  emit(event: SyncEvent): void {
    this.options.onEvent?.(event);
  }

  progress(phase: "windows" | "coverage", done: number, total: number): void {
    this.emit({
      type: "progress",
      phase,
      done,
      total,
      fetched: this.counters.fetched,
      inserted: this.counters.inserted,
    });
  }

  /** Requests, 429s and retries since the run began, from the client's own counters. */
  refreshClientStats(): void {
    const stats = this.client.stats();
    this.counters.requests = stats.requests - this.statsAtStart.requests;
    this.counters.throttled = stats.throttled - this.statsAtStart.throttled;
    this.counters.retries = stats.retries - this.statsAtStart.retries;
  }

  /** Queues a fetched page; the batch commits once it is large or old enough. */
  async write(page: BatchPage): Promise<void> {
    if (this.pending.length === 0) this.pendingSince = this.now();
    this.pending.push(page);
    this.pendingRecords += page.records.length;
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
        parseTime: this.options.parseTime,
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
