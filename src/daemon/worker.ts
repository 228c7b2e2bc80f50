// The scheduled worker: runs one cycle (sync, then maybe a report) on a node-cron schedule.
// One worker per database: it holds the "daemon" lease in SQLite for as long as it lives, renewed by
// a heartbeat, so a second daemon on the same file skips every tick; the lease expires (or its dead pid
// is noticed) so that a crashed worker does not block forever.
import cron from "node-cron";
import { LockedError, UsageError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { acquireLease, releaseLease, renewLease } from "../store/leases.ts";
import type { Store } from "../store/open.ts";

export const DAEMON_LEASE = "daemon";

/** One unit of work; it must stop early and cleanly when `signal` aborts. */
export type Cycle = (signal: AbortSignal) => Promise<CycleOutcome>;
export interface CycleOutcome {
  ok: boolean;
  fields: Record<string, unknown>;
}

export interface WorkerOptions {
  cron: string;
  timezone: string;
  holder: string;
  leaseTtlMs: number;
}

export interface WorkerDeps {
  store: Store;
  cycle: Cycle;
  log: Logger;
}

export function validateSchedule(expression: string, timezone: string): void {
  if (!cron.validate(expression)) {
    throw new UsageError(`--cron "${expression}" is not a valid cron expression (5 or 6 fields).`);
  }
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    throw new UsageError(`--tz "${timezone}" is not a known IANA time zone (e.g. UTC, Europe/Berlin).`);
  }
}

/** Runs until `stop` aborts. Resolves once the current cycle has finished and the lease is released. */
export async function runWorker(deps: WorkerDeps, options: WorkerOptions, stop: AbortSignal): Promise<void> {
  validateSchedule(options.cron, options.timezone);
  const { log } = deps;
  const lease = new HeldLease(deps.store, options.holder, options.leaseTtlMs, log);
  let current: { promise: Promise<CycleOutcome>; controller: AbortController } | undefined;

  const tick = async () => {
    if (stop.aborted) return;
    if (current) {
      // Our own overlap guard rather than node-cron's noOverlap, which prints unstructured warnings.
      log.warn("tick.skipped", { reason: "the previous cycle is still running" });
      return;
    }
    if (!lease.tryHold()) return;
    const controller = new AbortController();
    const promise = runCycle(deps, controller.signal).finally(() => {
      current = undefined;
    });
    current = { promise, controller };
    await promise;
  };

  const task = cron.schedule(options.cron, tick, {
    timezone: options.timezone,
    noOverlap: true,
    name: "flagtrail-sync",
  });
  task.on("execution:overlap", () =>
    log.warn("tick.skipped", { reason: "the previous cycle is still running" }),
  );
  log.info("daemon.start", {
    cron: options.cron,
    tz: options.timezone,
    next: task.getNextRun()?.toISOString() ?? null,
  });
  lease.tryHold();

  await new Promise<void>((resolve) => {
    if (stop.aborted) resolve();
    else stop.addEventListener("abort", () => resolve(), { once: true });
  });
  log.info("daemon.stopping", { cycleRunning: current !== undefined });
  await task.stop();
  await task.destroy();
  if (current) {
    current.controller.abort();
    await current.promise;
  }
  lease.release();
  log.info("daemon.stop", {});
}

/** One cycle now, under the lease; for `--once` (system cron, CI). Returns whether it succeeded. */
export async function runOnce(
  deps: WorkerDeps,
  options: Omit<WorkerOptions, "cron" | "timezone">,
  stop: AbortSignal,
) {
  const lease = new HeldLease(deps.store, options.holder, options.leaseTtlMs, deps.log);
  if (!lease.tryHold()) {
    throw new LockedError("Another flagtrail daemon holds this database; this cycle did not run.");
  }
  try {
    return await runCycle(deps, stop);
  } finally {
    lease.release();
  }
}

async function runCycle({ cycle, log }: WorkerDeps, signal: AbortSignal): Promise<CycleOutcome> {
  const started = Date.now();
  log.info("cycle.start", {});
  try {
    const outcome = await cycle(signal);
    const fields = { ...outcome.fields, seconds: (Date.now() - started) / 1000 };
    if (outcome.ok) log.info("cycle.end", fields);
    else log.error("cycle.failed", fields);
    return outcome;
  } catch (error) {
    // A failed cycle is logged and tried again at the next tick; status shows the run's outcome.
    log.error("cycle.failed", { error, seconds: (Date.now() - started) / 1000 });
    return { ok: false, fields: { error: error instanceof Error ? error.message : String(error) } };
  }
}

/** The daemon lease with its heartbeat. tryHold() is cheap to call on every tick. */
class HeldLease {
  private heartbeat: NodeJS.Timeout | undefined;
  private held = false;
  private lastRefusal = "";

  constructor(
    private readonly store: Store,
    private readonly holder: string,
    private readonly ttlMs: number,
    private readonly log: Logger,
  ) {}

  tryHold(): boolean {
    if (this.held) return true;
    try {
      const { tookOver } = acquireLease(this.store, DAEMON_LEASE, this.holder, this.ttlMs);
      this.held = true;
      this.lastRefusal = "";
      this.log.info("lease.acquired", tookOver ? { tookOverFrom: tookOver.holder } : {});
      this.heartbeat = setInterval(() => this.renew(), Math.max(250, Math.floor(this.ttlMs / 3)));
      this.heartbeat.unref();
      return true;
    } catch (error) {
      if (!(error instanceof LockedError)) throw error;
      this.lastRefusal = error.message;
      this.log.warn("tick.skipped", { reason: this.lastRefusal });
      return false;
    }
  }

  private renew(): void {
    try {
      renewLease(this.store, DAEMON_LEASE, this.holder, this.ttlMs);
    } catch (error) {
      this.held = false;
      clearInterval(this.heartbeat);
      this.log.error("lease.lost", { error });
    }
  }

  release(): void {
    clearInterval(this.heartbeat);
    if (this.held) releaseLease(this.store, DAEMON_LEASE, this.holder);
    this.held = false;
  }
}
