import { MockAgent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import type { ConsoleClientOptions, RetryEvent } from "../../src/api/clientOptions.ts";
import { createConsoleClient } from "../../src/api/consoleClient.ts";
import { AUTH_REJECTED_MESSAGE } from "../../src/api/responseOutcome.ts";
import { AbortedError, ApiError, AuthError, UsageError } from "../../src/errors.ts";
import { VERSION } from "../../src/version.ts";
import { FakeClock } from "./fakeClock.ts";

const ORIGIN = "http://127.0.0.1:4010";
const KEY = "console-S3cr3tK3yValue0123456789";
const PATH_PREFIX = "/console/v1/audit_logs";
const QUERY = { startDate: "2024-01-01", endDate: "2024-01-31", page: 1, limit: 100 } as const;

function envelope(records: unknown[], extra: Record<string, unknown> = {}) {
  return {
    message: "Audit logs listed successfully.",
    data: records,
    pagination: {
      itemsPerPage: 100,
      pageNumber: 1,
      totalItems: records.length,
      nextPage: null,
      previousPage: null,
    },
    ...extra,
  };
}

const agents: MockAgent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

function setup(overrides: Partial<ConsoleClientOptions> = {}) {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  agents.push(agent);
  const clock = new FakeClock();
  const retries: RetryEvent[] = [];
  const client = createConsoleClient({
    baseUrl: ORIGIN,
    apiKey: KEY,
    dispatcher: agent,
    clock,
    random: () => 0.5,
    onRetry: (event) => retries.push(event),
    ...overrides,
  });
  const pool = agent.get(ORIGIN);
  const audit = () => pool.intercept({ path: (p) => p.startsWith(PATH_PREFIX), method: "GET" });
  const calls = () => agent.getCallHistory()?.calls() ?? [];
  return { agent, clock, client, pool, audit, calls, retries };
}

/** Runs `fn`, expecting it to throw, and returns the error. */
async function failure(fn: () => Promise<unknown>): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

describe("request building", () => {
  it("sends explicit dates, paging, sort order, latestID and repeated actionTypes with the headers", async () => {
    const { client, audit, calls } = setup();
    audit().reply(200, envelope([]));
    const page = await client.listAuditLogs({
      ...QUERY,
      page: 2,
      limit: 50,
      latestID: "abc123",
      actionTypes: ["gate_create", "gate_update"],
    });
    const expectedPath =
      "/console/v1/audit_logs?startDate=2024-01-01&endDate=2024-01-31&page=2&limit=50&sortOrder=desc" +
      "&latestID=abc123&actionTypes=gate_create&actionTypes=gate_update";
    expect(page.requestPath).toBe(expectedPath);
    const [call] = calls();
    expect(call?.fullUrl).toBe(`${ORIGIN}${expectedPath}`);
    expect(call?.method).toBe("GET");
    expect(call?.headers).toMatchObject({
      "statsig-api-key": KEY,
      "user-agent": `flagtrail/${VERSION}`,
      "statsig-api-version": "20240601",
      accept: "application/json",
    });
  });

  it("honours sortOrder asc, a custom auth header and a base URL with a path prefix", async () => {
    const { client, pool, calls } = setup({ baseUrl: `${ORIGIN}/proxy/`, authHeader: "SERVICE-API-KEY" });
    pool.intercept({ path: (p) => p.startsWith("/proxy/console"), method: "GET" }).reply(200, envelope([]));
    const page = await client.listAuditLogs({ ...QUERY, sortOrder: "asc" });
    expect(page.requestPath).toBe(
      "/proxy/console/v1/audit_logs?startDate=2024-01-01&endDate=2024-01-31&page=1&limit=100&sortOrder=asc",
    );
    expect(calls()[0]?.headers).toMatchObject({ "service-api-key": KEY });
    expect(calls()[0]?.headers).not.toHaveProperty("statsig-api-key");
  });

  it.each([
    [{ ...QUERY, startDate: "2024-1-1" }],
    [{ ...QUERY, endDate: "2024-02-30" }],
    [{ ...QUERY, startDate: "2024-02-01" }],
    [{ ...QUERY, page: 0 }],
    [{ ...QUERY, limit: 1.5 }],
  ])("refuses a malformed query without sending it: %j", async (query) => {
    const { client, calls } = setup();
    const error = await failure(() => client.listAuditLogs(query));
    expect(error).toBeInstanceOf(UsageError);
    expect(calls()).toHaveLength(0);
  });

  it("reads other list endpoints with listPage", async () => {
    const { client, pool, calls } = setup();
    pool
      .intercept({ path: (p) => p.startsWith("/console/v1/dynamic_configs/"), method: "GET" })
      .reply(200, envelope([{ version: 3 }]));
    const page = await client.listPage("/console/v1/dynamic_configs/cfg1/versions", { page: 1, limit: 10 });
    expect(page.items).toEqual([{ version: 3 }]);
    expect(calls()[0]?.fullUrl).toBe(`${ORIGIN}/console/v1/dynamic_configs/cfg1/versions?page=1&limit=10`);
    expect(() => client.listPage("/other", {})).toThrow(UsageError);
  });
});

describe("responses", () => {
  it("returns records as received (unvalidated, extra fields kept) with the pagination", async () => {
    const { client, audit } = setup();
    const records = [{ id: "r1", surprise: { nested: true } }, "not even an object"];
    audit().reply(200, {
      ...envelope(records),
      pagination: { itemsPerPage: 2, pageNumber: 1, totalItems: 7, nextPage: "statsigapi.net/x?page=2" },
    });
    const page = await client.listAuditLogs(QUERY);
    expect(page.records).toEqual(records);
    expect(page.pagination).toMatchObject({ itemsPerPage: 2, pageNumber: 1, totalItems: 7 });
  });

  it.each([
    [{ message: "ok", data: {}, pagination: { itemsPerPage: 1, pageNumber: 1, totalItems: 0 } }, "data"],
    [{ message: "ok", data: [] }, "pagination"],
    [[1, 2, 3], "(root)"],
  ])("rejects a body that is not a list envelope without retrying: %j", async (body, where) => {
    const { client, audit, calls } = setup();
    audit().reply(200, body);
    const error = await failure(() => client.listAuditLogs(QUERY));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain("not a list envelope");
    expect(error.message).toContain(where);
    expect(error.message).toContain(PATH_PREFIX);
    expect(calls()).toHaveLength(1);
  });
});

describe("retries", () => {
  it("honours Retry-After in seconds on a 429 and counts the throttle", async () => {
    const { client, audit, clock, retries } = setup();
    audit().reply(429, { status: 429, message: "Too many requests" }, { headers: { "retry-after": "3" } });
    audit().reply(200, envelope([{ id: "a" }]));
    const page = await client.listAuditLogs(QUERY);
    expect(page.records).toHaveLength(1);
    expect(clock.sleeps).toEqual([3_000]);
    expect(client.stats()).toEqual({ requests: 2, throttled: 1, retries: 1 });
    expect(retries).toEqual([
      expect.objectContaining({
        attempt: 1,
        status: 429,
        delayMs: 3_000,
        reason: 'HTTP 429 "Too many requests"',
      }),
    ]);
  });

  it("honours Retry-After as an HTTP date", async () => {
    const { client, audit, clock } = setup();
    const at = new Date(clock.now() + 7_000).toUTCString();
    audit().reply(429, "", { headers: { "retry-after": at } });
    audit().reply(200, envelope([]));
    await client.listAuditLogs(QUERY);
    expect(clock.sleeps).toEqual([7_000]);
  });

  it("backs off by itself on a 429 without Retry-After, and holds back the whole run meanwhile", async () => {
    const { client, audit, clock } = setup();
    audit().reply(429, { status: 429, message: "Too many requests" });
    audit().reply(429, "");
    audit().reply(200, envelope([]));
    await client.listAuditLogs(QUERY);
    // Full jitter with random()=0.5 over a 2 s base: 1 s, then 2 s.
    expect(clock.sleeps).toEqual([1_000, 2_000]);
    expect(client.stats()).toEqual({ requests: 3, throttled: 2, retries: 2 });
  });

  it("retries a 503 with exponential backoff", async () => {
    const { client, audit, clock } = setup();
    audit().reply(503, "Service Unavailable");
    audit().reply(502, "<html>Bad gateway</html>");
    audit().reply(500, { status: 500, message: "oops" });
    audit().reply(200, envelope([]));
    await client.listAuditLogs(QUERY);
    expect(clock.sleeps).toEqual([250, 500, 1_000]);
    expect(client.stats()).toEqual({ requests: 4, throttled: 0, retries: 3 });
  });

  it.each(["ECONNRESET", "UND_ERR_SOCKET"])("retries a connection reset (%s)", async (code) => {
    const { client, audit, retries } = setup();
    audit().replyWithError(Object.assign(new Error("socket hang up"), { code }));
    audit().reply(200, envelope([{ id: "x" }]));
    const page = await client.listAuditLogs(QUERY);
    expect(page.records).toEqual([{ id: "x" }]);
    expect(retries[0]?.reason).toBe(`connection failed (${code})`);
    expect(client.stats().retries).toBe(1);
  });

  it("retries an attempt that times out", async () => {
    const { client, audit, retries } = setup({ timeoutMs: 30 });
    audit().reply(200, envelope([])).delay(1_000);
    audit().reply(200, envelope([{ id: "late" }]));
    const page = await client.listAuditLogs(QUERY);
    expect(page.records).toEqual([{ id: "late" }]);
    expect(retries[0]?.reason).toBe("timed out after 30 ms");
    expect(client.stats()).toEqual({ requests: 2, throttled: 0, retries: 1 });
  });

  it("retries a truncated JSON body", async () => {
    const { client, audit, retries } = setup();
    audit().reply(200, '{"message":"Audit logs listed successfully.","data":[{"id":"a"');
    audit().reply(200, envelope([{ id: "a" }]));
    const page = await client.listAuditLogs(QUERY);
    expect(page.records).toEqual([{ id: "a" }]);
    expect(retries[0]?.reason).toContain("truncated or invalid JSON");
  });

  it("passes every attempt through the rate budget", async () => {
    const { client, audit, clock } = setup({ rateLimits: [{ limit: 1, windowMs: 1_000 }] });
    audit().reply(503, "");
    audit().reply(200, envelope([]));
    await client.listAuditLogs(QUERY);
    // 250 ms of backoff, then the budget holds the retry until the first attempt leaves its window
    // (1 000 ms + 250 ms margin after it started).
    expect(clock.sleeps).toEqual([250, 1_000]);
  });

  it("keeps a steady run inside the rate budget", async () => {
    const { client, audit, clock } = setup({ rateLimits: [{ limit: 2, windowMs: 1_000 }] });
    audit().reply(200, envelope([])).times(5);
    for (let i = 0; i < 5; i += 1) await client.listAuditLogs({ ...QUERY, page: i + 1 });
    expect(clock.sleeps).toEqual([1_250, 1_250]);
    expect(client.stats()).toEqual({ requests: 5, throttled: 0, retries: 0 });
  });

  it("gives up after maxAttempts with a typed error that says what was asked and what happened", async () => {
    const { client, audit, calls } = setup({ maxAttempts: 3 });
    audit().reply(503, { status: 503, message: "Service Unavailable" }).persist();
    const error = await failure(() => client.listAuditLogs(QUERY));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
    // The host tried is named (issue 9), the key is not.
    expect(error.message).toContain(`GET http://127.0.0.1:4010${PATH_PREFIX}?startDate=2024-01-01`);
    expect(error.message).toContain('HTTP 503 "Service Unavailable"');
    expect(error.message).toContain("gave up after 3 attempts");
    expect(calls()).toHaveLength(3);
    expect(client.stats()).toEqual({ requests: 3, throttled: 0, retries: 2 });
  });

  it("gives up when waiting would pass the total retry time", async () => {
    const { client, audit, calls } = setup({ maxRetryTimeMs: 60_000 });
    audit().reply(429, "", { headers: { "retry-after": "600" } });
    const error = await failure(() => client.listAuditLogs(QUERY));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain("would pass the 60 s retry limit");
    expect(calls()).toHaveLength(1);
    expect(client.stats().throttled).toBe(1);
  });

  it("stops with AbortedError when the run is aborted", async () => {
    const { client, audit, calls } = setup();
    audit().reply(200, envelope([]));
    const error = await failure(() => client.listAuditLogs(QUERY, AbortSignal.abort()));
    expect(error).toBeInstanceOf(AbortedError);
    expect(calls()).toHaveLength(0);
  });
});

describe("error mapping", () => {
  it("maps 401 to AuthError without echoing the key or the server's message", async () => {
    const { client, audit, calls } = setup();
    audit().reply(401, {
      status: 401,
      message: `This endpoint only accepts an active CONSOLE key, but an invalid key was sent. Key: ${KEY.slice(0, 12)}…`,
    });
    const error = await failure(() => client.listAuditLogs(QUERY));
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toBe(AUTH_REJECTED_MESSAGE);
    expect((error as AuthError).status).toBe(401);
    expect(calls()).toHaveLength(1);
  });

  it("maps 403 to an ApiError naming the path", async () => {
    const { client, audit } = setup();
    audit().reply(403, { status: 403, message: "Forbidden resource" });
    const error = await failure(() => client.listAuditLogs(QUERY));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(AuthError);
    expect((error as ApiError).status).toBe(403);
    expect(error.message).toContain(`GET ${PATH_PREFIX}?`);
    expect(error.message).toContain("Forbidden resource");
  });

  it.each([
    [400, "Invalid request. Please check the request input and try again."],
    [404, "Not Found. The requested resource could not be found."],
  ])(
    "maps %i to an ApiError with the server's message and the path, without retrying",
    async (status, text) => {
      const { client, audit, calls } = setup();
      audit().reply(status, { status, message: text });
      const error = await failure(() => client.listAuditLogs(QUERY));
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(status);
      expect(error.message).toContain(text);
      expect(error.message).toContain(PATH_PREFIX);
      expect(calls()).toHaveLength(1);
    },
  );

  it("never lets the key into an error message, a retry event or a request path", async () => {
    const { client, audit, retries } = setup({ maxAttempts: 2 });
    audit().reply(500, { status: 500, message: `boom for key ${KEY}` });
    audit().reply(400, { status: 400, message: `bad key ${KEY} and ${KEY.slice(0, 15)}…` });
    const error = await failure(() => client.listAuditLogs(QUERY));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain("[redacted]");
    expect(error.message).not.toContain(KEY.slice(0, 12));
    expect(JSON.stringify(retries)).not.toContain(KEY.slice(8, 20));
    expect(retries[0]?.reason).toContain("[redacted]");
  });

  it("reports a non-retryable network failure as ApiError", async () => {
    const { client, audit } = setup();
    audit().replyWithError(Object.assign(new Error("getaddrinfo ENOTFOUND nowhere"), { code: "ENOTFOUND" }));
    const error = await failure(() => client.listAuditLogs(QUERY));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain("ENOTFOUND");
    expect(client.stats()).toEqual({ requests: 1, throttled: 0, retries: 0 });
  });
});

describe("options", () => {
  it.each([
    [{ baseUrl: "ftp://example.com" }, "http:// or https://"],
    [{ baseUrl: "not a url" }, "http:// or https://"],
    [{ apiKey: "" }, "No API key"],
    [{ apiKey: "   " }, "No API key"],
    [{ apiKey: undefined }, "No API key"],
    [{ authHeader: "bad header" }, "header name"],
    [{ maxAttempts: 0 }, ""],
    [{ rateLimits: [] }, ""],
  ])("refuses %j with a UsageError", (override, text) => {
    const error = (() => {
      try {
        createConsoleClient({ baseUrl: ORIGIN, apiKey: KEY, ...override } as ConsoleClientOptions);
      } catch (e) {
        return e as Error;
      }
      throw new Error("expected a failure");
    })();
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain(text);
    expect(error.message).not.toContain(KEY);
  });

  it("defaults to the real service's base URL and auth header", async () => {
    const agent = new MockAgent({ enableCallHistory: true });
    agent.disableNetConnect();
    agents.push(agent);
    agent
      .get("https://statsigapi.net")
      .intercept({ path: (p) => p.startsWith(PATH_PREFIX), method: "GET" })
      .reply(200, envelope([]));
    const client = createConsoleClient({ apiKey: KEY, dispatcher: agent, clock: new FakeClock() });
    await client.listAuditLogs(QUERY);
    const call = agent.getCallHistory()?.calls()[0];
    expect(call?.origin).toBe("https://statsigapi.net");
    expect(call?.headers).toMatchObject({ "statsig-api-key": KEY });
    await client.close();
  });
});

describe("excerptOf", () => {
  it("names an HTML error page by its title and keeps any excerpt on one line", async () => {
    const { excerptOf } = await import("../../src/api/responseOutcome.ts");
    expect(excerptOf("<html>\r\n<head><title>502 Bad Gateway</title></head>\n<body>…</body></html>")).toBe(
      "502 Bad Gateway",
    );
    expect(excerptOf("<!doctype html>\n<p>down</p>")).toBe("an HTML page");
    expect(excerptOf("upstream\nreset\u001b[31m")).toBe("upstream reset [31m");
    expect(excerptOf("  \n ")).toBeUndefined();
  });
});
