// Fault decisions. Every API request draws the same number of values from one seeded stream, so a
// given seed and request sequence always meet the same faults. Malformed records are decided by a
// hash of the record id instead, so that a record is malformed on every read, whatever the order.
import type { Counters } from "./counters.ts";
import type { Faults, FaultsInput } from "./options.ts";
import { faultsSchema } from "./options.ts";
import { hash32, Prng } from "./prng.ts";

export interface RequestFaults {
  delayMs: number;
  /** Set when the request is answered with this 5xx status. */
  serverError?: number;
  reset: boolean;
  truncate: boolean;
  /** Bad-server answers, checked after serverError in this order. */
  htmlError: boolean;
  throttle: boolean;
  nonJson200: boolean;
}

export type RateDecision = { limited: false } | { limited: true; retryAfterSeconds: number | undefined };

const SERVER_ERRORS = [500, 502, 503, 504] as const;

/** One-shot faults queued for the next API requests, for tests that need "the 3rd page fails". */
export type QueuedFault = "serverError" | "reset" | "truncate" | "rateLimit";

export class FaultEngine {
  private readonly prng: Prng;
  /** Draws of the bad-server modes: a stream of their own, so existing seeds meet the same faults. */
  private readonly badPrng: Prng;
  private settings: Faults;
  /** Accepted request instants per rate-limit window, oldest first. */
  private windows: number[][] = [];
  private queue: QueuedFault[] = [];

  constructor(
    private readonly seed: number,
    settings: Faults,
    private readonly counters: Counters,
    private readonly now: () => number,
  ) {
    this.prng = new Prng(seed, 7);
    this.badPrng = new Prng(seed, 11);
    this.settings = settings;
    this.windows = settings.rateLimit?.windows.map(() => []) ?? [];
  }

  get current(): Faults {
    return structuredClone(this.settings);
  }

  /** The live settings, read-only and uncopied (read per request by the audit route). */
  get active(): Readonly<Faults> {
    return this.settings;
  }

  /** Replaces the fault settings (fields left out take their defaults: faults off). */
  set(input: FaultsInput): Faults {
    this.settings = faultsSchema.parse(input);
    this.windows = this.settings.rateLimit?.windows.map(() => []) ?? [];
    return this.current;
  }

  /** Adds one-shot faults that hit the next API requests in order, before any random fault. */
  enqueue(faults: QueuedFault[]): void {
    this.queue.push(...faults);
  }

  /** Counts the request against the rate limit, or refuses it. */
  rateLimit(): RateDecision {
    if (this.queue[0] === "rateLimit") {
      this.queue.shift();
      return {
        limited: true,
        retryAfterSeconds: this.settings.rateLimit?.retryAfter === false ? undefined : 1,
      };
    }
    const limits = this.settings.rateLimit;
    if (limits === undefined) return { limited: false };
    const now = this.now();
    let waitMs = 0;
    limits.windows.forEach((window, i) => {
      const hits = this.windows[i]!;
      while (hits.length > 0 && hits[0]! <= now - window.windowMs) hits.shift();
      if (hits.length >= window.limit) waitMs = Math.max(waitMs, hits[0]! + window.windowMs - now);
    });
    if (waitMs > 0) {
      return {
        limited: true,
        retryAfterSeconds: limits.retryAfter ? Math.max(1, Math.ceil(waitMs / 1000)) : undefined,
      };
    }
    for (const hits of this.windows) hits.push(now);
    return { limited: false };
  }

  /** Faults of one API request; always draws five (+ three) values so the streams stay aligned. */
  forRequest(): RequestFaults {
    const s = this.settings;
    const jitter = this.prng.next();
    const error = this.prng.next();
    const which = this.prng.next();
    const reset = this.prng.next();
    const truncate = this.prng.next();
    const decision: RequestFaults = {
      delayMs: s.latencyMs + Math.floor(jitter * (s.jitterMs + 1)),
      reset: reset < s.resetRate,
      truncate: truncate < s.truncateRate,
      htmlError: this.badPrng.next() < s.htmlErrorRate,
      throttle: this.badPrng.next() < s.throttleRate,
      nonJson200: this.badPrng.next() < s.nonJson200Rate,
    };
    if (error < s.errorRate) {
      decision.serverError = s.errorStatus ?? SERVER_ERRORS[Math.floor(which * SERVER_ERRORS.length)]!;
    }
    const queued = this.queue[0];
    if (queued !== undefined && queued !== "rateLimit") {
      this.queue.shift();
      if (queued === "serverError") decision.serverError = 503;
      if (queued === "reset") decision.reset = true;
      if (queued === "truncate") decision.truncate = true;
    }
    if (decision.serverError !== undefined) this.counters.fault("serverError");
    else if (decision.htmlError) this.counters.fault("htmlError");
    else if (decision.throttle) this.counters.fault("throttle");
    else if (decision.reset) this.counters.fault("reset");
    else if (decision.nonJson200) this.counters.fault("nonJson200");
    return decision;
  }

  /** Page size after the silent clamp. */
  clampLimit(limit: number): number {
    const max = this.settings.maxPageSize;
    if (max !== undefined && limit > max) {
      this.counters.fault("clamp");
      return max;
    }
    return limit;
  }

  /** Whether a record is served malformed, and how (stable per id). */
  malformedKind(recordId: string): number | undefined {
    if (this.settings.malformedRate <= 0) return undefined;
    const h = hash32(recordId, this.seed);
    if (h / 0x100000000 >= this.settings.malformedRate) return undefined;
    return hash32(recordId, this.seed ^ 0x5bd1e995) % MALFORMATIONS.length;
  }

  /** Per audit log request: whether to change a record under its id, and a value to pick it with. */
  mutation(): number | undefined {
    const draw = this.prng.next();
    const pick = this.prng.next();
    return draw < this.settings.mutateRate ? pick : undefined;
  }

  /** Per audit log request for a later page: how many records to insert at the newest end first. */
  headInsert(page: number): number {
    const draw = this.prng.next();
    if (page < 2 || !(draw < this.settings.headInsertRate)) return 0;
    return this.settings.headInsertCount;
  }
}

/** Ways a served record can be broken: missing required fields or fields of the wrong type. */
export const MALFORMATIONS: ReadonlyArray<(record: Record<string, unknown>) => void> = [
  (r) => delete r.actionType,
  (r) => delete r.date,
  (r) => {
    r.time = 12345;
  },
  (r) => {
    r.changes = "not an object";
  },
  (r) => {
    r.tags = "not-an-array";
  },
  (r) => {
    r.name = null;
  },
];
