import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/api/redact.ts";
import {
  backoffDelay,
  isRetryableNetworkError,
  isRetryableStatus,
  parseRetryAfter,
} from "../../src/api/retryPolicy.ts";

const NOW = Date.UTC(2024, 0, 1, 12, 0, 0);

describe("parseRetryAfter", () => {
  it.each([
    ["0", 0],
    ["5", 5_000],
    [" 12 ", 12_000],
    ["1.5", 1_500],
    ["Mon, 01 Jan 2024 12:00:30 GMT", 30_000],
    ["Monday, 01-Jan-24 12:01:00 GMT", 60_000], // obsolete RFC 850 form
    ["Mon, 01 Jan 2024 11:00:00 GMT", 0], // in the past: retry now
  ])("%j -> %i ms", (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([undefined, "", "soon", "-3", "Mon, 01 Jan 2024 12:00:30", "2024-01-01T12:00:30"])(
    "%j is no hint",
    (value) => {
      expect(parseRetryAfter(value, NOW)).toBeUndefined();
    },
  );

  it("reads the first of repeated headers", () => {
    expect(parseRetryAfter(["2", "9"], NOW)).toBe(2_000);
  });
});

describe("backoffDelay", () => {
  const policy = { baseDelayMs: 500, maxDelayMs: 4_000 };
  it("doubles the ceiling per retry up to the maximum, scaled by the jitter draw", () => {
    const ceilings = [1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, policy, () => 0.999_999));
    expect(ceilings).toEqual([499, 999, 1_999, 3_999, 3_999, 3_999]);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
    expect(backoffDelay(3, policy, () => 0.25)).toBe(500);
  });
});

describe("retryable failures", () => {
  it.each([429, 408, 500, 502, 503, 504])("status %i is retried", (status) => {
    expect(isRetryableStatus(status)).toBe(true);
  });
  it.each([200, 400, 401, 403, 404, 409, 422])("status %i is an answer", (status) => {
    expect(isRetryableStatus(status)).toBe(false);
  });
  it("finds a retryable code on the error or its cause", () => {
    expect(isRetryableNetworkError(Object.assign(new Error("x"), { code: "ECONNRESET" }))).toBe(true);
    const wrapped = new Error("fetch failed", {
      cause: Object.assign(new Error("y"), { code: "UND_ERR_SOCKET" }),
    });
    expect(isRetryableNetworkError(wrapped)).toBe(true);
    expect(isRetryableNetworkError(Object.assign(new Error("z"), { code: "ENOTFOUND" }))).toBe(false);
    expect(isRetryableNetworkError("ECONNRESET")).toBe(false);
  });
});

describe("redactSecrets", () => {
  it("removes the key, truncated key-like tokens, and bounds the length", () => {
    const key = "console-AbCdEf0123456789";
    expect(redactSecrets(`Key: ${key} rejected`, [key])).toBe("Key: [redacted] rejected");
    expect(redactSecrets("Key: console-AbCd… rejected", [key])).toBe("Key: [redacted] rejected");
    expect(redactSecrets("x".repeat(400), [key])).toHaveLength(301);
    expect(redactSecrets("Forbidden resource", [key])).toBe("Forbidden resource");
  });
});
