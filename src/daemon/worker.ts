// The scheduled worker: runs one cycle (sync, then maybe a report) on a node-cron schedule.
// One worker per database: it holds the "daemon" lease for as long as it lives, so a second daemon on
// the same store skips every tick. On SQLite the lease is a row renewed by a heartbeat that expires (or
// its dead pid is noticed) so that a crashed worker does not block forever; on PostgreSQL it is an
// advisory lock of a session of its own, which dies with a crashed worker's connection.
import cron from "node-cron";
import { asDiskFull, LockedError, SettingError } from "../errors.ts";
import { startHeartbeat } from "../heartbeat.ts";
import type { Logger } from "../log.ts";
import { canonicalTimeZone } from "../report/period.ts";
import {
  acquireLease,
  DAEMON_LEASE,
  openLeaseStore,
  releaseLease,
  renewLease,
  type Store,
} from "../store/syncStore.ts";

export { DAEMON_LAST_CYCLE_KEY, DAEMON_LEASE } from "../store/syncStore.ts";

/** One unit of work; it must stop early and cleanly when `signal` aborts. */
export type Cycle = (signal: AbortSignal) => Promise<CycleOutcome>;
export interface CycleOutcome {
  ok: boolean;
  /** Stopped by a signal before it ended (what had not started, a report or the checks, did not run). */
  interrupted?: boolean;
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
  /** Told every cycle's outcome, failed ones included (the daemon keeps the last one for status). */
  onOutcome?: (outcome: CycleOutcome) => void | Promise<void>;
}

export function validateSchedule(expression: string, timezone: string): void {
  // node-cron accepts 7 and more fields (a Quartz habit) and reads them as something else.
  const fields = expression.trim().split(/\s+/).length;
  if (fields < 5 || fields > 6 || !cron.validate(expression)) {
    throw new SettingError(
      "schedule",
      `The schedule "${expression}" is not a valid cron expression (5 or 6 fields).`,
    );
  }
  canonicalTimeZone(timezone); // refuses an unknown zone
}

/** Runs until `stop` aborts. Resolves once the current cycle has finished and the lease is released. */
export async function runWorker(deps: WorkerDeps, options: WorkerOptions, stop: AbortSignal): Promise<void> {
  validateSchedule(options.cron, options.timezone);
  const { log } = deps;
  const lease = new HeldLease(deps.store, options.holder, options.leaseTtlMs, log);
  let current: { promise: Promise<CycleOutcome>; controller: AbortController } | undefined;
  // Ticks waiting for the lease: the stop awaits them before it releases the lease one may have taken.
  const holding = new Set<Promise<boolean>>();

  const tick = async () => {
    if (stop.aborted) return;
    if (current) {
      // Our own overlap guard rather than node-cron's noOverlap, which prints unstructured warnings.
      log.warn("tick.skipped", { reason: "the previous cycle is still running" });
      return;
    }
    const hold = lease.tryHold("tick");
    holding.add(hold);
    const held = await hold.finally(() => holding.delete(hold));
    // Stopped while this tick waited for the lease: no cycle starts after the stop.
    if (!held || stop.aborted) return;
    // Another tick started a cycle while this one waited for the lease: one cycle at a time.
    if (current) {
      log.warn("tick.skipped", { reason: "the previous cycle is still running" });
      return;
    }
    const controller = new AbortController();
    const promise = runCycle(deps, controller.signal).finally(() => {
      current = undefined;
    });
    current = { promise, controller };
    await promise;
  };

  const task = cron.schedule(options.cron, tick, { timezone: options.timezone, name: "flagtrail-sync" });
  log.info("daemon.start", {
    cron: options.cron,
    tz: options.timezone,
    next: task.getNextRun()?.toISOString() ?? null,
  });
  await lease.tryHold("start");

  await new Promise<void>((resolve) => {
    if (stop.aborted) resolve();
    else stop.addEventListener("abort", () => resolve(), { once: true });
  });
  log.info("daemon.stopping", { cycleRunning: current !== undefined });
  await task.stop();
  await task.destroy();
  await Promise.all(holding);
  if (current) {
    current.controller.abort();
    await current.promise;
  }
  await lease.release();
  log.info("daemon.stop", {});
}

/** One cycle now, under the lease; for `--once` (system cron, CI). Returns whether it succeeded. */
export async function runOnce(
  deps: WorkerDeps,
  options: Omit<WorkerOptions, "cron" | "timezone">,
  stop: AbortSignal,
) {
  const lease = new HeldLease(deps.store, options.holder, options.leaseTtlMs, deps.log);
  if (!(await lease.tryHold("tick"))) {
    throw new LockedError("Another flagtrail daemon holds this database; this cycle did not run.");
  }
  try {
    return await runCycle(deps, stop);
  } finally {
    await lease.release();
  }
}

async function runCycle(
  { cycle, log, onOutcome, store }: WorkerDeps,
  signal: AbortSignal,
): Promise<CycleOutcome> {
  const started = Date.now();
  log.info("cycle.start", {});
  let outcome: CycleOutcome;
  try {
    const result = await cycle(signal);
    const fields = { ...result.fields, seconds: (Date.now() - started) / 1000 };
    // A stop during the cycle skips what had not started: never ok, whatever the part that ran says (a
    // sync that ended before the stop said "ok", which the interrupted cycle's log must not repeat).
    outcome = signal.aborted
      ? { ok: false, interrupted: true, fields: { ...fields, outcome: "interrupted" } }
      : { ok: result.ok, fields };
  } catch (error) {
    // A failed cycle is logged and tried again at the next tick; status shows the last outcome.
    const failure = asDiskFull(error, store.location) ?? error;
    const message = failure instanceof Error ? failure.message : String(failure);
    outcome = { ok: false, fields: { error: message, seconds: (Date.now() - started) / 1000 } };
  }
  if (outcome.ok) log.info("cycle.end", outcome.fields);
  else if (outcome.interrupted) log.warn("cycle.interrupted", outcome.fields);
  else log.error("cycle.failed", outcome.fields);
  try {
    await onOutcome?.(outcome);
  } catch (error) {
    log.warn("cycle.outcome_not_recorded", { error });
  }
  return outcome;
}

/**
 * The daemon lease with its heartbeat. tryHold() is cheap to call on every tick. The heartbeat writes
 * through a connection of its own: the cycle's connection may be inside a long read (a report streaming
 * rows), where a renewal would fail as "busy" or turn the read snapshot into a write lock.
 */
class HeldLease {
  private heartbeat: { stop: () => void } | undefined;
  private held = false;
  /** The heartbeat's connection, opened once (a promise, so that two callers cannot open two). */
  private connection: Promise<Store> | undefined;

  constructor(
    private readonly store: Store,
    private readonly holder: string,
    private readonly ttlMs: number,
    private readonly log: Logger,
  ) {}

  private leaseStore(): Promise<Store> {
    if (this.connection) return this.connection;
    const opening = openLeaseStore(this.store);
    this.connection = opening;
    // A failed open is tried again at the next tick, as before.
    opening.catch(() => {
      if (this.connection === opening) this.connection = undefined;
    });
    return opening;
  }

  /** `at` says whether this is the start of the worker or a tick, for the log. */
  async tryHold(at: "start" | "tick"): Promise<boolean> {
    if (this.held) return true;
    try {
      const store = await this.leaseStore();
      const { tookOver } = await acquireLease(store, DAEMON_LEASE, this.holder, this.ttlMs);
      // Another call (start and a tick) took it while this one waited: one heartbeat only.
      if (this.held) return true;
      this.held = true;
      this.log.info("lease.acquired", tookOver ? { tookOverFrom: tookOver.holder } : {});
      this.heartbeat = startHeartbeat({
        renew: () => this.renew(),
        ttlMs: this.ttlMs,
        onMissed: (error) => this.log.warn("lease.renew_failed", { error }),
        onLost: (error) => {
          this.held = false;
          this.log.error("lease.lost", { error });
        },
      });
      return true;
    } catch (error) {
      // LockedError: another worker holds it. Anything else (SQLITE_BUSY under a long write) is
      // logged too: the next tick tries again, the schedule keeps running.
      const reason = error instanceof Error ? error.message : String(error);
      if (at === "start") this.log.warn("lease.busy", { reason });
      else this.log.warn("tick.skipped", { reason });
      return false;
    }
  }

  private async renew(): Promise<void> {
    const store = await this.leaseStore();
    // Released while the connection was awaited: nothing to renew.
    if (!this.held) return;
    await renewLease(store, DAEMON_LEASE, this.holder, this.ttlMs);
  }

  async release(): Promise<void> {
    this.heartbeat?.stop();
    const pending = this.connection;
    this.connection = undefined;
    const wasHeld = this.held;
    this.held = false;
    const connection = await pending?.catch(() => undefined);
    if (!connection) return;
    try {
      if (wasHeld) await releaseLease(connection, DAEMON_LEASE, this.holder);
    } finally {
      if (connection !== this.store) await connection.close();
    }
  }
}
