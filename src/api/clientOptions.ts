// The console client's options, validated where they enter (createConsoleClient): defaults for the
// connection, timeouts, retries and rate limits, and the hooks tests inject (dispatcher, clock, random).
import { z } from "zod";
import { VERSION } from "../version.ts";
import type { Clock } from "./clock.ts";
import { authHeaderSchema, baseUrlSchema, DEFAULT_AUTH_HEADER, DEFAULT_BASE_URL } from "./connection.ts";
import { DEFAULT_RATE_LIMITS, RateBudget, rateLimitsSchema } from "./rateBudget.ts";
import { Dispatcher } from "./undiciParts.ts";

/** Reported before each retry, e.g. for a log line or a progress bar. Never holds the key. */
export interface RetryEvent {
  requestPath: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  status: number | undefined;
  reason: string;
  delayMs: number;
}

const isFunction = (value: unknown) => typeof value === "function";

export const consoleClientOptionsSchema = z.object({
  baseUrl: baseUrlSchema.default(DEFAULT_BASE_URL),
  apiKey: z.string({ error: "No API key was given." }).trim().min(1, { error: "No API key was given." }),
  authHeader: authHeaderSchema.default(DEFAULT_AUTH_HEADER),
  /** Sent as STATSIG-API-VERSION to pin the API's behaviour; null sends no version header. */
  apiVersion: z.string().min(1).nullable().default("20240601"),
  /** Per attempt, headers and body included. */
  timeoutMs: z.number().int().positive().default(30_000),
  maxAttempts: z.number().int().min(1).max(50).default(6),
  /** Total time spent on one request, waits between attempts included. */
  maxRetryTimeMs: z
    .number()
    .int()
    .nonnegative()
    .default(5 * 60_000),
  baseDelayMs: z.number().int().nonnegative().default(500),
  /** 429 without Retry-After: the service's shortest window is 10 s, so start backing off longer. */
  throttledBaseDelayMs: z.number().int().nonnegative().default(2_000),
  maxDelayMs: z.number().int().nonnegative().default(30_000),
  rateLimits: rateLimitsSchema.default([...DEFAULT_RATE_LIMITS]),
  /** A budget shared with other clients of the same run; rateLimits is ignored when given. */
  rateBudget: z.instanceof(RateBudget).optional(),
  userAgent: z.string().min(1).default(`flagtrail/${VERSION}`),
  /** For tests (MockAgent) or a caller-owned pool; it is not closed by close(). */
  dispatcher: z.instanceof(Dispatcher).optional(),
  clock: z.custom<Clock>((v) => typeof v === "object" && v !== null && "now" in v && "sleep" in v).optional(),
  /** Uniform in [0, 1); injected for deterministic jitter in tests. */
  random: z.custom<() => number>(isFunction).optional(),
  onRetry: z.custom<(event: RetryEvent) => void>(isFunction).optional(),
});
export type ConsoleClientOptions = z.input<typeof consoleClientOptionsSchema>;
export type ResolvedClientOptions = z.output<typeof consoleClientOptionsSchema>;
