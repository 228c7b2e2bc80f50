// Driver errors that the real-server tests (open.test.ts) cannot provoke here: DNS failures, connect
// timeouts, a password quoted back in a message.
import { describe, expect, it } from "vitest";
import { FlagtrailError } from "../../src/errors.ts";
import { describePgError } from "../../src/store/pg/errors.ts";
import { scrubSecret } from "../../src/storeLocation.ts";

const URL_WITH_SECRET = "postgres://flagtrail:p%40ss-w0rd@db.internal:5432/ft";
const MASKED = "postgres://flagtrail:***@db.internal:5432/ft";

function driverError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe("describePgError", () => {
  it("names an unknown host or a connect timeout as an unreachable server", () => {
    expect(
      describePgError(driverError("getaddrinfo ENOTFOUND db.internal", "ENOTFOUND"), URL_WITH_SECRET).message,
    ).toBe(`Cannot reach the PostgreSQL server of ${MASKED} (getaddrinfo ENOTFOUND db.internal).`);
    expect(
      describePgError(driverError("Connection terminated due to connection timeout"), URL_WITH_SECRET)
        .message,
    ).toBe(
      `Cannot reach the PostgreSQL server of ${MASKED} (Connection terminated due to connection timeout).`,
    );
  });

  it("does not take a server's statement timeout for an unreachable server", () => {
    const error = describePgError(
      driverError("canceling statement due to statement timeout", "57014"),
      URL_WITH_SECRET,
    );
    expect(error.message).toBe(
      `Cannot use the PostgreSQL database at ${MASKED}: canceling statement due to statement timeout.`,
    );
  });

  it("never repeats the password, as typed or decoded", () => {
    const error = describePgError(
      driverError(`bad thing with ${URL_WITH_SECRET} and p@ss-w0rd and p%40ss-w0rd`, "XX000"),
      URL_WITH_SECRET,
    );
    expect(error).toBeInstanceOf(FlagtrailError);
    expect(error.message).toBe(
      `Cannot use the PostgreSQL database at ${MASKED}: bad thing with ${MASKED} and *** and ***.`,
    );
    expect(scrubSecret("no secret here", URL_WITH_SECRET)).toBe("no secret here");
  });

  it("passes flagtrail's own errors through", () => {
    const own = new FlagtrailError("Already one sentence.");
    expect(describePgError(own, URL_WITH_SECRET)).toBe(own);
  });

  it("describes the driver's error under drizzle's 'Failed query' wrapper, without the statement or its values", () => {
    const lost = driverError("terminating connection due to administrator command", "57P01");
    const wrapped = new Error(
      'Failed query: insert into "coverage" ("day") values ($1)\nparams: 2026-08-30',
      {
        cause: lost,
      },
    );
    const message = describePgError(wrapped, URL_WITH_SECRET).message;
    expect(message).toBe(
      `Lost the connection to the PostgreSQL server of ${MASKED} (terminating connection due to administrator command); what was committed is kept, run the command again.`,
    );
    expect(message).not.toMatch(/Failed query|params|\n/);
  });
});
