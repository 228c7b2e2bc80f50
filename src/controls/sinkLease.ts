// One delivery per sink at a time: a run delivering to a sink (its alerts, or a SIEM sink's records and
// findings) holds the store's lease `deliver:<sink>` meanwhile (src/store/leases.ts). Two runs at once (a
// cron `check --notify` beside the daemon, two `export --sink`) each read the same due rows and cursor,
// and a Slack or exec sink has no idempotency key to drop the second copy. A run that finds the lease
// held skips that sink, it does not wait: what is due stays due, and the holder is sending it now.
// A crashed holder frees it as every lease is freed: on SQLite by its expiry or its pid gone from this
// host, on PostgreSQL with its session's advisory lock.
import { randomUUID } from "node:crypto";
import { DatabaseBusyError, LockedError, sinkLabel } from "../errors.ts";
import { startHeartbeat } from "../heartbeat.ts";
import { leaseHolder } from "../holders.ts";
import { acquireLease, releaseLease, renewLease } from "../store/leases.ts";
import type { AnyStore } from "../store/openAny.ts";

/** Renewed every third of it while the delivery runs; a holder killed on another host blocks this long. */
const DELIVERY_LEASE_TTL_MS = 60_000;

/** A sink's delivery lease is `deliver:<sink>` (status lists them by it). */
export const DELIVERY_LEASE_PREFIX = "deliver:";

/** Another run holds the sink's delivery lease: this run skipped the sink. */
export class SinkBusyError extends LockedError {
  constructor(
    readonly sink: string,
    options?: ErrorOptions,
  ) {
    super(`${sinkLabel(sink)} is being delivered by another run`, options);
  }
}

/** A sink's delivery lease held by this run: `signal` aborts once it is lost (or `stop` aborts). */
export interface HeldSinkLease {
  sink: string;
  signal: AbortSignal;
  /** Gives the lease back; once is enough, a second call does nothing. */
  release: () => Promise<void>;
}

/**
 * Takes lease `deliver:<sink>` of `store` and keeps it renewed until released; throws SinkBusyError
 * (nothing to send then) when another run holds it. The signal aborts when `stop` does or when the lease
 * is lost (not renewed within its TTL, taken over): the holder then sends nothing more.
 */
export async function takeSinkLease(
  store: AnyStore,
  sink: string,
  stop: AbortSignal | undefined,
): Promise<HeldSinkLease> {
  const name = `${DELIVERY_LEASE_PREFIX}${sink}`;
  // Unique per run, also within one process (a test's two handles, a daemon's projects).
  const holder = `${leaseHolder("deliver")}/${randomUUID()}`;
  try {
    await acquireLease(store, name, holder, DELIVERY_LEASE_TTL_MS);
  } catch (error) {
    // Held by another run: skipped. A database too busy to take it is a failure, not a delivery under way.
    if (error instanceof LockedError && !(error instanceof DatabaseBusyError))
      throw new SinkBusyError(sink, { cause: error });
    throw error;
  }
  const lost = new AbortController();
  const heartbeat = startHeartbeat({
    renew: () => renewLease(store, name, holder, DELIVERY_LEASE_TTL_MS),
    ttlMs: DELIVERY_LEASE_TTL_MS,
    onLost: (error) => lost.abort(error),
  });
  let released = false;
  return {
    sink,
    signal: stop ? AbortSignal.any([stop, lost.signal]) : lost.signal,
    release: async () => {
      if (released) return;
      released = true;
      heartbeat.stop();
      await releaseLease(store, name, holder);
    },
  };
}

/** Runs `deliver` holding the sink's delivery lease (takeSinkLease), given back when it ends. */
export async function underSinkLease<T>(
  store: AnyStore,
  sink: string,
  stop: AbortSignal | undefined,
  deliver: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const lease = await takeSinkLease(store, sink, stop);
  try {
    return await deliver(lease.signal);
  } finally {
    await lease.release();
  }
}
