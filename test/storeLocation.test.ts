import { describe, expect, it } from "vitest";
import { UsageError } from "../src/errors.ts";
import { describeLocation, maskUrl, parseStoreLocation } from "../src/storeLocation.ts";

/** The usage error parseStoreLocation throws for `value` (exit 2), its message never holding the password. */
function refusal(value: string): UsageError {
  let caught: unknown;
  try {
    parseStoreLocation(value);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(UsageError);
  expect((caught as UsageError).exitCode).toBe(2);
  expect((caught as Error).message).not.toContain("hunter2");
  return caught as UsageError;
}

describe("parseStoreLocation", () => {
  it("reads paths as SQLite stores", () => {
    for (const path of [
      "./flagtrail.db",
      "/var/lib/ft.db",
      "flagtrail.db",
      ":memory:",
      "C:\\ft\\a.db",
      "a:b.db",
    ]) {
      expect(parseStoreLocation(path)).toEqual({ engine: "sqlite", path });
    }
  });

  it("reads postgres:// and postgresql:// URLs as PostgreSQL stores, kept as given", () => {
    for (const url of [
      "postgres://flagtrail@db.internal/flagtrail",
      "postgresql://u:p%40ss@127.0.0.1:5433/ft?sslmode=require",
      "POSTGRES://u@h/db",
    ]) {
      expect(parseStoreLocation(url)).toEqual({ engine: "postgres", url });
    }
  });

  it("refuses other URLs with a usage error (exit 2) that masks the password", () => {
    for (const value of [
      "mysql://root:hunter2@db/ft",
      "http://example.test/ft.db",
      "postgress://u:hunter2@h/d",
    ]) {
      expect(refusal(value).message).toMatch(
        /^Unsupported database .*: give a SQLite file path or a postgres:\/\/ URL\.$/,
      );
    }
  });

  // The slashes forgotten made a SQLite file named "postgres:flagtrail:hunter2@db.internal", whose name
  // (password included) every message naming the store then printed.
  it("refuses a postgres: URL without // instead of reading it as a file path", () => {
    for (const value of [
      "postgres:flagtrail:hunter2@db.internal",
      "PostgreSQL:/u:hunter2@h/d",
      "postgres:",
    ]) {
      expect(refusal(value).message).toMatch(
        /^Not a valid PostgreSQL URL: .*write postgres:\/\/user@host\/database\.$/,
      );
    }
  });

  it("refuses a postgres URL that does not parse", () => {
    expect(() => parseStoreLocation("postgres://u:hunter2@[bad/db")).toThrow(UsageError);
    expect(() => parseStoreLocation("postgres://u:hunter2@[bad/db")).toThrow(
      /^Not a valid PostgreSQL URL: postgres:\/\/u:\*\*\*@\[bad\/db\.$/,
    );
  });
});

describe("maskUrl", () => {
  it("replaces the password and keeps the rest byte for byte", () => {
    expect(maskUrl("postgres://flagtrail:s3cret@db.internal:5432/flagtrail")).toBe(
      "postgres://flagtrail:***@db.internal:5432/flagtrail",
    );
    expect(maskUrl("postgresql://u:p@ss/w:rd@DB.Internal/ft")).toBe("postgresql://u:***@DB.Internal/ft");
    expect(maskUrl("postgres://u:@h/db")).toBe("postgres://u:***@h/db");
  });

  it("masks password query parameters too", () => {
    expect(maskUrl("postgres://h/db?user=u&password=s3cret&sslmode=require")).toBe(
      "postgres://h/db?user=u&password=***&sslmode=require",
    );
    expect(maskUrl("postgres://h/db?sslpassword=k3y")).toBe("postgres://h/db?sslpassword=***");
  });

  it("leaves URLs without a password, and paths, unchanged", () => {
    for (const value of [
      "postgres://flagtrail@db.internal/flagtrail",
      "postgres://db/ft",
      "./a:b@c.db",
      "x.db",
    ]) {
      expect(maskUrl(value)).toBe(value);
    }
  });

  it("describes a location without its password", () => {
    expect(describeLocation(parseStoreLocation("postgres://u:s3cret@h/db"))).toBe("postgres://u:***@h/db");
    expect(describeLocation(parseStoreLocation("./ft.db"))).toBe("./ft.db");
  });
});
