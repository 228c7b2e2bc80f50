// The console API client: one keep-alive undici Agent, a rate budget every attempt passes through,
// and a small retry loop. undici's RetryAgent is not used: it retries below the point where the body
// is parsed (a 200 with truncated JSON would not be retried) and cannot await the shared rate budget
// before each attempt; both are requirements here.
import { Agent, Dispatcher, request } from "undici";
import { z } from "zod";
import { AbortedError, ApiError, AuthError, UsageError } from "../errors.ts";
import { VERSION } from "../version.ts";
import type { AuditLogPage, AuditLogQuery, ClientStats, ConsoleClient } from "./client.ts";
import { type Clock, systemClock } from "./clock.ts";
import { DEFAULT_RATE_LIMITS, RateBudget, rateLimitsSchema } from "./rateBudget.ts";
import { redactSecrets } from "./redact.ts";
import {
  backoffDelay,
  isRetryableNetworkError,
  isRetryableStatus,
  networkErrorCode,
  parseRetryAfter,
} from "./retryPolicy.ts";
import { errorBodySchema, listEnvelopeSchema, type Pagination } from "./schemas.ts";

export const DEFAULT_BASE_URL = "https://statsigapi.net";
export const DEFAULT_AUTH_HEADER = "STATSIG-API-KEY";
export const AUDIT_LOGS_PATH = "/console/v1/audit_logs";
export const AUTH_REJECTED_MESSAGE = "The API key was rejected: it is not an active console key.";

/** Reported before each retry, e.g. for a log line or a progress bar. Never holds the key. */
export interface RetryEvent {
  requestPath: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  status: number | undefined;
  reason: string;
  delayMs: number;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const isFunction = (value: unknown) => typeof value === "function";

export const consoleClientOptionsSchema = z.object({
  baseUrl: z
    .url({
      protocol: /^https?$/,
      error: "The base URL must be an http:// or https:// address.",
    })
    .default(DEFAULT_BASE_URL),
  apiKey: z.string({ error: "No API key was given." }).trim().min(1, { error: "No API key was given." }),
  authHeader: z
    .string()
    .regex(HEADER_NAME, { error: "The auth header name must be a valid HTTP header name." })
    .default(DEFAULT_AUTH_HEADER),
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
type ResolvedOptions = z.output<typeof consoleClientOptionsSchema>;

const dateText = z.iso.date({ error: "Dates must be YYYY-MM-DD." });
export const auditLogQuerySchema = z
  .object({
    startDate: dateText,
    endDate: dateText,
    page: z.number().int().min(1),
    limit: z.number().int().min(1),
    actionTypes: z.array(z.string().min(1)).readonly().optional(),
    latestID: z.string().min(1).optional(),
    sortOrder: z.enum(["asc", "desc"]).optional(),
  })
  .refine((q) => q.startDate <= q.endDate, { error: "startDate must not be after endDate." });

export type QueryValue = string | number | readonly string[] | undefined;

/** `path?query` with arrays as a repeated key (`actionTypes=a&actionTypes=b`), undefined left out. */
export function buildRequestPath(path: string, params: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (typeof value === "string" || typeof value === "number") search.append(key, String(value));
    else for (const item of value) search.append(key, item);
  }
  const query = search.toString();
  return query === "" ? path : `${path}?${query}`;
}

/**
 * The audit log page request. Dates are always explicit (without them the service searches only the
 * last 90 days) and so is the sort order, because `latestID` means "newer than" only in `desc`.
 */
export function auditLogsRequestPath(query: AuditLogQuery): string {
  const parsed = auditLogQuerySchema.safeParse(query);
  if (!parsed.success) {
    throw new UsageError(`Invalid audit log query: ${parsed.error.issues.map((i) => i.message).join(" ")}`);
  }
  const q = parsed.data;
  return buildRequestPath(AUDIT_LOGS_PATH, {
    startDate: q.startDate,
    endDate: q.endDate,
    page: q.page,
    limit: q.limit,
    sortOrder: q.sortOrder ?? "desc",
    latestID: q.latestID,
    actionTypes: q.actionTypes,
  });
}

/** A page of any console list endpoint (e.g. dynamic config versions). */
export interface ListPage {
  items: unknown[];
  pagination: Pagination;
  requestPath: string;
}

/** The console client, plus a generic list page reader for endpoints other than the audit log. */
export interface ConsoleApiClient extends ConsoleClient {
  listPage(path: string, params: Record<string, QueryValue>, signal?: AbortSignal): Promise<ListPage>;
}

type AttemptOutcome =
  | { ok: true; json: unknown }
  | { ok: false; status: number | undefined; reason: string; retryAfterMs: number | undefined };

class TimeoutSignal extends Error {}

/**
 * One line from a body that is not JSON: a proxy's HTML error page is named by its title, anything
 * else is cut short, with line breaks and control characters flattened, so errors stay one sentence.
 */
export function excerptOf(text: string): string | undefined {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  const flat = (title ?? (/^\s*</.test(text) ? "an HTML page" : text))
    .replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, " ")
    .trim();
  return flat === "" ? undefined : flat.slice(0, 120);
}

export function createConsoleClient(options: ConsoleClientOptions): ConsoleApiClient {
  const parsed = consoleClientOptionsSchema.safeParse(options);
  if (!parsed.success) {
    // zod messages never carry the input, so the key cannot leak through here.
    throw new UsageError(parsed.error.issues[0]?.message ?? "Invalid console client options.");
  }
  return new UndiciConsoleClient(parsed.data);
}

class UndiciConsoleClient implements ConsoleApiClient {
  private readonly origin: string;
  private readonly pathPrefix: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly budget: RateBudget;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly headers: Record<string, string>;
  private readonly counters: ClientStats = { requests: 0, throttled: 0, retries: 0 };

  constructor(private readonly options: ResolvedOptions) {
    const base = new URL(options.baseUrl);
    this.origin = base.origin;
    this.pathPrefix = base.pathname.replace(/\/+$/, "");
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.budget = options.rateBudget ?? new RateBudget({ limits: options.rateLimits, clock: this.clock });
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      new Agent({
        keepAliveTimeout: 10_000,
        keepAliveMaxTimeout: 60_000,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        connect: { timeout: Math.min(options.timeoutMs, 10_000) },
      });
    this.headers = {
      accept: "application/json",
      "user-agent": options.userAgent,
      [options.authHeader.toLowerCase()]: options.apiKey,
      ...(options.apiVersion === null ? {} : { "statsig-api-version": options.apiVersion }),
    };
  }

  async listAuditLogs(query: AuditLogQuery, signal?: AbortSignal): Promise<AuditLogPage> {
    const page = await this.readList(auditLogsRequestPath(query), signal);
    return { records: page.items, pagination: page.pagination, requestPath: page.requestPath };
  }

  listPage(path: string, params: Record<string, QueryValue>, signal?: AbortSignal): Promise<ListPage> {
    if (!path.startsWith("/console/v1/")) throw new UsageError(`Not a console API path: ${path}`);
    return this.readList(buildRequestPath(path, params), signal);
  }

  stats(): ClientStats {
    return { ...this.counters };
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async readList(path: string, signal: AbortSignal | undefined): Promise<ListPage> {
    const requestPath = `${this.pathPrefix}${path}`;
    const json = await this.getJson(requestPath, signal);
    const envelope = listEnvelopeSchema.safeParse(json);
    if (!envelope.success) {
      const issues = envelope.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
        .join("; ");
      throw new ApiError(`GET ${requestPath}: the response is not a list envelope (${issues}).`, 200);
    }
    return { items: envelope.data.data, pagination: envelope.data.pagination, requestPath };
  }

  /** GET with retries; every attempt waits for the rate budget and is counted. */
  private async getJson(requestPath: string, signal: AbortSignal | undefined): Promise<unknown> {
    const { maxAttempts, maxRetryTimeMs } = this.options;
    const started = this.clock.now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.budget.acquire(signal);
      } catch (error) {
        throw this.aborted(requestPath, error);
      }
      this.counters.requests += 1;
      if (attempt > 1) this.counters.retries += 1;

      const outcome = await this.attempt(requestPath, signal);
      if (outcome.ok) return outcome.json;
      if (outcome.status === 429) this.counters.throttled += 1;

      const elapsedMs = this.clock.now() - started;
      const giveUp = (why: string) =>
        new ApiError(
          // The origin names the host tried (a wrong base URL shows); the key travels in a header only.
          `GET ${this.origin}${requestPath}: ${outcome.reason}; gave up after ${attempt} attempt${attempt === 1 ? "" : "s"} ` +
            `in ${(elapsedMs / 1000).toFixed(1)} s (${why}).`,
          outcome.status,
        );
      if (attempt >= maxAttempts) throw giveUp(`maximum ${maxAttempts} attempts`);

      const throttled = outcome.status === 429;
      const delayMs =
        outcome.retryAfterMs ??
        backoffDelay(
          attempt,
          {
            baseDelayMs: throttled ? this.options.throttledBaseDelayMs : this.options.baseDelayMs,
            maxDelayMs: this.options.maxDelayMs,
          },
          this.random,
        );
      if (elapsedMs + delayMs > maxRetryTimeMs) {
        throw giveUp(
          `waiting ${(delayMs / 1000).toFixed(1)} s more would pass the ${(maxRetryTimeMs / 1000).toFixed(0)} s retry limit`,
        );
      }
      this.options.onRetry?.({
        requestPath,
        attempt,
        status: outcome.status,
        reason: outcome.reason,
        delayMs,
      });
      try {
        // A throttled service throttles the whole run: hold every request back, not just this one.
        if (throttled || outcome.retryAfterMs !== undefined) this.budget.pauseFor(delayMs);
        else await this.clock.sleep(delayMs, signal);
      } catch (error) {
        throw this.aborted(requestPath, error);
      }
    }
  }

  /** One HTTP exchange. Returns a retryable failure, or throws a final one. */
  private async attempt(requestPath: string, signal: AbortSignal | undefined): Promise<AttemptOutcome> {
    const controller = new AbortController();
    const timeout = new TimeoutSignal(`timed out after ${this.options.timeoutMs} ms`);
    const timer = setTimeout(() => controller.abort(timeout), this.options.timeoutMs);
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    try {
      const exchange = this.exchange(requestPath, controller.signal);
      // Settle on abort even if the dispatcher does not notice it (undici's MockAgent with a delay).
      return await new Promise<AttemptOutcome>((resolve, reject) => {
        const onStop = () => reject(controller.signal.reason);
        if (controller.signal.aborted) onStop();
        controller.signal.addEventListener("abort", onStop, { once: true });
        exchange.then(resolve, reject).finally(() => controller.signal.removeEventListener("abort", onStop));
      });
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (signal?.aborted) throw this.aborted(requestPath, error);
      if (controller.signal.reason === timeout) {
        return { ok: false, status: undefined, reason: timeout.message, retryAfterMs: undefined };
      }
      const code = networkErrorCode(error);
      const what = code ?? (error instanceof Error ? error.message : String(error));
      if (isRetryableNetworkError(error)) {
        return {
          ok: false,
          status: undefined,
          reason: `connection failed (${what})`,
          retryAfterMs: undefined,
        };
      }
      throw new ApiError(
        `GET ${this.origin}${requestPath}: request failed (${this.redact(what)}).`,
        undefined,
        {
          cause: error,
        },
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private async exchange(requestPath: string, signal: AbortSignal): Promise<AttemptOutcome> {
    const response = await request(`${this.origin}${requestPath}`, {
      method: "GET",
      headers: this.headers,
      dispatcher: this.dispatcher,
      signal,
    });
    // Always read the body: it frees the keep-alive connection and an error body explains the status.
    const text = await response.body.text();
    const status = response.statusCode;

    if (status >= 200 && status < 300) {
      try {
        return { ok: true, json: JSON.parse(text) };
      } catch {
        return {
          ok: false,
          status,
          reason: `HTTP ${status} with a truncated or invalid JSON body (${text.length} characters)`,
          retryAfterMs: undefined,
        };
      }
    }
    const serverMessage = this.serverMessage(text);
    if (isRetryableStatus(status)) {
      return {
        ok: false,
        status,
        reason: `HTTP ${status}${serverMessage === undefined ? "" : ` "${serverMessage}"`}`,
        retryAfterMs: parseRetryAfter(response.headers["retry-after"], this.clock.now()),
      };
    }
    // The 401 body echoes (part of) the key: its text is never used.
    if (status === 401) throw new AuthError(AUTH_REJECTED_MESSAGE, status);
    if (status === 403) {
      throw new ApiError(
        `GET ${requestPath} was refused (HTTP 403${serverMessage === undefined ? "" : ` "${serverMessage}"`}): ` +
          "the key is valid but may not read this resource.",
        status,
      );
    }
    const said = serverMessage === undefined ? "" : `: ${serverMessage}`;
    throw new ApiError(`GET ${requestPath} failed with HTTP ${status}${said}`, status);
  }

  /** The `message` of an error body, or a short excerpt of a non-JSON body, with secrets removed. */
  private serverMessage(text: string): string | undefined {
    let message: string | undefined;
    try {
      const body = errorBodySchema.safeParse(JSON.parse(text));
      message = body.success ? body.data.message : undefined;
    } catch {
      message = excerptOf(text);
    }
    return message === undefined ? undefined : this.redact(message);
  }

  private redact(text: string): string {
    return redactSecrets(text, [this.options.apiKey]);
  }

  private aborted(requestPath: string, error: unknown): AbortedError {
    return new AbortedError(`GET ${requestPath} was aborted.`, { cause: error });
  }
}
