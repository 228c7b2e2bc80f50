// A proactive request budget shared by every request of a run. The service allows about 100 requests
// per 10 s and 900 per 15 min and may answer 429 without any hint, so the client keeps under every
// window itself: a request starts only when all sliding windows have room.
import { z } from "zod";
import { type Clock, systemClock } from "./clock.ts";

const rateWindowSchema = z.object({
  limit: z.number().int().positive(),
  windowMs: z.number().int().positive(),
});
export type RateWindow = z.infer<typeof rateWindowSchema>;
export const rateLimitsSchema = z.array(rateWindowSchema).min(1);

export const DEFAULT_RATE_LIMITS: readonly RateWindow[] = [
  { limit: 100, windowMs: 10_000 },
  { limit: 900, windowMs: 15 * 60_000 },
];

/** The share of the limits one run may use (the project's other API clients keep the rest): above 0, at most 1. */
export const rateShareSchema = z
  .number({ error: "expected a number such as 0.5" })
  .gt(0, { error: "must be above 0" })
  .max(1, { error: "must be at most 1" });

/** `limits` scaled to `share` of each window's requests (at least one per window). */
export function sharedLimits(limits: readonly RateWindow[], share: number): RateWindow[] {
  const s = rateShareSchema.parse(share);
  return limits.map((w) => ({ limit: Math.max(1, Math.floor(w.limit * s)), windowMs: w.windowMs }));
}

/**
 * Each window is treated as this much longer than configured: the server counts arrivals, we count
 * departures, and two requests' network delays differ by a little.
 */
const DEFAULT_MARGIN_MS = 250;

export interface RateBudgetOptions {
  limits?: readonly RateWindow[];
  clock?: Clock;
  marginMs?: number;
}

function untilSettledOrAborted(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return promise;
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

export class RateBudget {
  readonly limits: readonly RateWindow[];
  private readonly clock: Clock;
  private readonly marginMs: number;
  private readonly longestMs: number;
  /** Start times of granted requests, ascending; only those inside the longest window are kept. */
  private readonly granted: number[] = [];
  private pauseEndsAt = Number.NEGATIVE_INFINITY;
  /** Waiters are served in arrival order so that no request starves behind later ones. */
  private queue: Promise<void> = Promise.resolve();
  private grantedTotal = 0;

  constructor(options: RateBudgetOptions = {}) {
    this.limits = rateLimitsSchema.parse(options.limits ?? DEFAULT_RATE_LIMITS);
    this.clock = options.clock ?? systemClock;
    this.marginMs = z
      .number()
      .nonnegative()
      .parse(options.marginMs ?? DEFAULT_MARGIN_MS);
    this.longestMs = Math.max(...this.limits.map((w) => w.windowMs)) + this.marginMs;
  }

  /** Milliseconds to wait, from `now`, before one more request fits every window and any pause. */
  waitMs(now: number = this.clock.now()): number {
    this.forgetBefore(now - this.longestMs);
    let wait = Math.max(0, this.pauseEndsAt - now);
    const count = this.granted.length;
    for (const { limit, windowMs } of this.limits) {
      const span = windowMs + this.marginMs;
      if (count < limit) continue;
      // The window has room once the request `limit` places from the newest has left it.
      const blocking = this.granted[count - limit]!;
      if (blocking > now - span) wait = Math.max(wait, blocking + span - now);
    }
    return wait;
  }

  /** Waits (on a timer, never spinning) until a request may start, then counts it as started. */
  async acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await untilSettledOrAborted(previous, signal);
      for (;;) {
        const now = this.clock.now();
        const wait = this.waitMs(now);
        if (wait <= 0) {
          this.granted.push(now);
          this.grantedTotal += 1;
          return;
        }
        await this.clock.sleep(wait, signal);
      }
    } finally {
      // An aborted waiter must not let the next one overtake the waiter still ahead of it.
      void previous.then(release);
    }
  }

  /** Holds every request of the run back for `ms` (e.g. after a 429); never shortens a pause. */
  pauseFor(ms: number): void {
    this.pauseEndsAt = Math.max(this.pauseEndsAt, this.clock.now() + Math.max(0, ms));
  }

  /** Requests granted since the budget was created. */
  get grantedCount(): number {
    return this.grantedTotal;
  }

  private forgetBefore(cutoff: number): void {
    let stale = 0;
    while (stale < this.granted.length && this.granted[stale]! <= cutoff) stale += 1;
    if (stale > 0) this.granted.splice(0, stale);
  }
}
