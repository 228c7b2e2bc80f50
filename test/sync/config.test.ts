import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveClientTuning, resolveDbPath, resolveSyncConfig } from "../../src/config.ts";
import { UsageError } from "../../src/errors.ts";

describe("resolveSyncConfig", () => {
  it("uses defaults, then env, then flags", () => {
    expect(resolveSyncConfig({}, { FLAGTRAIL_API_KEY: "console-abc" })).toEqual({
      baseUrl: "https://statsigapi.net",
      apiKey: "console-abc",
      authHeader: "STATSIG-API-KEY",
      dbPath: "./flagtrail.db",
    });
    const env = {
      FLAGTRAIL_API_KEY: "console-env",
      FLAGTRAIL_BASE_URL: "http://127.0.0.1:8080/",
      FLAGTRAIL_AUTH_HEADER: "SERVICE-API-KEY",
      FLAGTRAIL_DB: "/tmp/env.db",
    };
    expect(resolveSyncConfig({}, env)).toEqual({
      baseUrl: "http://127.0.0.1:8080",
      apiKey: "console-env",
      authHeader: "SERVICE-API-KEY",
      dbPath: "/tmp/env.db",
    });
    expect(resolveSyncConfig({ apiKey: "console-flag", db: "/tmp/flag.db" }, env)).toMatchObject({
      apiKey: "console-flag",
      dbPath: "/tmp/flag.db",
    });
  });

  it("rejects a missing key and a non-http(s) base URL with one sentence, without echoing the key", () => {
    expect(() => resolveSyncConfig({}, {})).toThrow(UsageError);
    expect(() => resolveSyncConfig({}, {})).toThrow(
      "No API key: set FLAGTRAIL_API_KEY or FLAGTRAIL_API_KEY_FILE, or pass --api-key-file.",
    );
    const bad = () => resolveSyncConfig({ apiKey: "console-secret", baseUrl: "ftp://example.com" }, {});
    expect(bad).toThrow("The base URL must be an http:// or https:// address.");
    try {
      bad();
    } catch (error) {
      expect(String((error as Error).message)).not.toContain("console-secret");
    }
    expect(() => resolveSyncConfig({ apiKey: "k", authHeader: "bad header" }, {})).toThrow(/header/);
  });

  it("reads the key from a file, trimmed, after --api-key and before the variables", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-key-"));
    const file = join(dir, "key");
    writeFileSync(file, "  console-from-file\n", { mode: 0o600 });
    const other = join(dir, "other");
    writeFileSync(other, "console-from-env-file\n");
    const key = (flags: Parameters<typeof resolveSyncConfig>[0], env: Record<string, string>) =>
      resolveSyncConfig(flags, env).apiKey;
    expect(key({ apiKeyFile: file }, {})).toBe("console-from-file");
    expect(key({}, { FLAGTRAIL_API_KEY_FILE: other })).toBe("console-from-env-file");
    expect(key({ apiKeyFile: file }, { FLAGTRAIL_API_KEY: "console-env" })).toBe("console-from-file");
    expect(key({}, { FLAGTRAIL_API_KEY: "console-env", FLAGTRAIL_API_KEY_FILE: other })).toBe("console-env");
    // --api-key wins, and a file it makes unnecessary is never opened.
    expect(key({ apiKey: "console-flag", apiKeyFile: join(dir, "missing") }, {})).toBe("console-flag");
  });

  it("says in one sentence that a key file is unreadable or empty, never echoing what it holds", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-key-"));
    const missing = join(dir, "missing");
    expect(() => resolveSyncConfig({ apiKeyFile: missing }, {})).toThrow(
      new UsageError(`Cannot read the API key file ${missing} (ENOENT).`),
    );
    expect(() => resolveSyncConfig({}, { FLAGTRAIL_API_KEY_FILE: dir })).toThrow(
      new UsageError(`Cannot read the API key file ${dir} (EISDIR).`),
    );
    const blank = join(dir, "blank");
    writeFileSync(blank, " \n\n");
    expect(() => resolveSyncConfig({ apiKeyFile: blank }, {})).toThrow(
      new UsageError(`The API key file ${blank} is empty.`),
    );
    // A key file with a bad URL beside it: the error is about the URL and holds no part of the key.
    const file = join(dir, "key");
    writeFileSync(file, "console-secret-in-file");
    try {
      resolveSyncConfig({ apiKeyFile: file, baseUrl: "ftp://example.com" }, {});
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toBe("The base URL must be an http:// or https:// address.");
    }
  });

  it("resolves the database path alone for read-only commands", () => {
    expect(resolveDbPath({}, {})).toBe("./flagtrail.db");
    expect(resolveDbPath({}, { FLAGTRAIL_DB: "/x.db" })).toBe("/x.db");
    expect(resolveDbPath({ db: "/y.db" }, { FLAGTRAIL_DB: "/x.db" })).toBe("/y.db");
    // An empty variable is unset; an empty --db (an unset shell variable in `--db "$STORE"`) is refused.
    expect(resolveDbPath({}, { FLAGTRAIL_DB: "" })).toBe("./flagtrail.db");
    const empty = new UsageError("The database path is empty.");
    expect(() => resolveDbPath({ db: "" }, { FLAGTRAIL_DB: "/x.db" })).toThrow(empty);
    expect(() => resolveDbPath({ db: "", dbFile: "/no/such/file" }, {})).toThrow(empty);
  });
});

describe("resolveClientTuning", () => {
  it("reads rate limits and retry timing from the environment", () => {
    expect(resolveClientTuning({})).toEqual({});
    expect(
      resolveClientTuning({
        FLAGTRAIL_RATE_LIMITS: "5/1000,50/60000",
        FLAGTRAIL_RETRY_THROTTLED_BASE_MS: "10",
      }),
    ).toEqual({
      rateLimits: [
        { limit: 5, windowMs: 1000 },
        { limit: 50, windowMs: 60000 },
      ],
      throttledBaseDelayMs: 10,
    });
    expect(() => resolveClientTuning({ FLAGTRAIL_RATE_LIMITS: "lots" })).toThrow(UsageError);
  });
});
