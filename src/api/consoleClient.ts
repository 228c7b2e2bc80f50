// The console API client: one keep-alive undici Agent, a rate budget every attempt passes through,
// and a small retry loop. undici's RetryAgent is not used: it retries below the point where the body
// is parsed (a 200 with truncated JSON would not be retried) and cannot await the shared rate budget
// before each attempt; both are requirements here. What a response means (data, retry, final error) is
// ./responseOutcome.ts.
import type { Dispatcher } from "undici";
import { AbortedError, ApiError, UsageError } from "../errors.ts";
import type { AuditLogPage, AuditLogQuery, ClientStats, ConsoleClient } from "./client.ts";
import {
  type ConsoleClientOptions,
  consoleClientOptionsSchema,
  type ResolvedClientOptions,
} from "./clientOptions.ts";
import { type Clock, systemClock } from "./clock.ts";
import { asSentence } from "./connection.ts";
import { RateBudget } from "./rateBudget.ts";
import { redactSecrets } from "./redact.ts";
import { auditLogsRequestPath, buildRequestPath, type QueryValue } from "./requestPaths.ts";
import { type AttemptOutcome, responseOutcome } from "./responseOutcome.ts";
import { backoffDelay, isRetryableNetworkError, networkErrorCode } from "./retryPolicy.ts";
import { listEnvelopeSchema, type Pagination } from "./schemas.ts";
import { Agent, dispatchRequest } from "./undiciParts.ts";

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

class TimeoutSignal extends Error {}

export function createConsoleClient(options: ConsoleClientOptions): ConsoleApiClient {
  const parsed = consoleClientOptionsSchema.safeParse(options);
  if (!parsed.success) {
    // zod messages never carry the input, so the key cannot leak through here.
    throw new UsageError(asSentence(parsed.error.issues[0]?.message ?? "invalid console client options"));
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

  constructor(private readonly options: ResolvedClientOptions) {
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
        // An idle socket is dropped before the server drops it: a request written to a socket the
        // server has just closed fails (UND_ERR_SOCKET). Without a Keep-Alive hint, 4 s is under the
        // 5 s many servers use (node's default); with one, undici closes 2 s before the hint says.
        keepAliveTimeout: 4_000,
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
    const { items, pagination, requestPath, body } = page;
    return { records: items, pagination, requestPath, body };
  }

  listPage(path: string, params: Record<string, QueryValue>, signal?: AbortSignal): Promise<ListPage> {
    if (!path.startsWith("/console/v1/")) throw new UsageError(`Not a console API path: ${path}`);
    // Entity reads keep their pages: not the response texts as well.
    return this.readList(buildRequestPath(path, params), signal).then(
      ({ items, pagination, requestPath }) => ({
        items,
        pagination,
        requestPath,
      }),
    );
  }

  stats(): ClientStats {
    return { ...this.counters };
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** A list page and its response text (the audit log's records' raw texts are cut from it). */
  private async readList(
    path: string,
    signal: AbortSignal | undefined,
  ): Promise<ListPage & { body: string }> {
    const requestPath = `${this.pathPrefix}${path}`;
    const { json, text } = await this.getJson(requestPath, signal);
    const envelope = listEnvelopeSchema.safeParse(json);
    if (!envelope.success) {
      const issues = envelope.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
        .join("; ");
      throw new ApiError(`GET ${requestPath}: the response is not a list envelope (${issues}).`, 200);
    }
    return { items: envelope.data.data, pagination: envelope.data.pagination, requestPath, body: text };
  }

  /** GET with retries; every attempt waits for the rate budget and is counted. */
  private async getJson(
    requestPath: string,
    signal: AbortSignal | undefined,
  ): Promise<{ json: unknown; text: string }> {
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
      if (outcome.ok) return outcome;
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
    // What undici's request(url) does with the URL: origin, then the path and query as parsed.
    const url = new URL(`${this.origin}${requestPath}`);
    const response = await dispatchRequest.call(this.dispatcher, {
      origin: url.origin,
      path: url.search ? `${url.pathname}${url.search}` : url.pathname,
      method: "GET",
      headers: this.headers,
      signal,
    });
    // Always read the body: it frees the keep-alive connection and an error body explains the status.
    const text = await response.body.text();
    return responseOutcome(
      requestPath,
      { status: response.statusCode, text, retryAfter: response.headers["retry-after"] },
      { now: () => this.clock.now(), redact: (t) => this.redact(t) },
    );
  }

  private redact(text: string): string {
    return redactSecrets(text, [this.options.apiKey]);
  }

  private aborted(requestPath: string, error: unknown): AbortedError {
    return new AbortedError(`GET ${requestPath} was aborted.`, { cause: error });
  }
}
