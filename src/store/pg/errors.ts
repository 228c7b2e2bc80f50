// A node-postgres error in one sentence naming the store by its masked URL (a driver's may hold a password).
import { FlagtrailError } from "../../errors.ts";
import { maskUrl, scrubSecret } from "../../storeLocation.ts";

/** The server ended the session (terminated, crash shutdown, not yet accepting) or its socket went away. */
const LOST = new Set<unknown>(["57P01", "57P02", "57P03", "ECONNRESET", "EPIPE"]);
const LOST_MESSAGE = /Connection terminated unexpectedly|not queryable|connection error/i;

const UNREACHABLE = new Set<unknown>([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

function sentence(message: string): string {
  return message.replace(/[\s.]+$/, "");
}

/** Whether the server ended the session (or its socket went away): what the session held is gone with it. */
export function lostConnection(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    LOST.has(code) || (code === undefined && LOST_MESSAGE.test(error instanceof Error ? error.message : ""))
  );
}

/** The driver's error as a FlagtrailError, or the error itself when it already is one. */
export function describePgError(error: unknown, url: string): FlagtrailError {
  if (error instanceof FlagtrailError) return error;
  // drizzle's "Failed query: <sql> params: <values>" quotes values: describe the driver's error it wraps.
  const cause = (error as { cause?: unknown }).cause;
  if (error instanceof Error && error.message.startsWith("Failed query:") && cause !== undefined)
    return describePgError(cause, url);
  const where = maskUrl(url);
  const code = (error as { code?: unknown }).code;
  // One sentence: the first line of the driver's message (a server's DETAIL and HINT come on others).
  const message = scrubSecret((error instanceof Error ? error.message : String(error)).split("\n")[0]!, url);
  const fail = (text: string) => new FlagtrailError(text, { cause: error });
  // node-postgres' own connect timeouts carry no code (a server's statement timeout has SQLSTATE 57014).
  if (UNREACHABLE.has(code) || (code === undefined && /timeout/i.test(message))) {
    return fail(`Cannot reach the PostgreSQL server of ${where} (${sentence(message)}).`);
  }
  if (lostConnection(error)) {
    return fail(
      `Lost the connection to the PostgreSQL server of ${where} (${sentence(message)}); what was committed is kept, run the command again.`,
    );
  }
  if (code === "53100") {
    return fail(`The PostgreSQL server of ${where} has no space left on device (${sentence(message)}).`);
  }
  if (code === "28P01" || /client password must be a string/.test(message)) {
    return fail(`PostgreSQL refused the login to ${where}: wrong user name or password.`);
  }
  if (code === "28000") return fail(`PostgreSQL refused the login to ${where}: ${sentence(message)}.`);
  if (code === "3D000") {
    return fail(`The database of ${where} does not exist on that server; create it first (CREATE DATABASE).`);
  }
  if (code === "42501") {
    return fail(`The PostgreSQL user of ${where} lacks a privilege flagtrail needs: ${sentence(message)}.`);
  }
  return fail(`Cannot use the PostgreSQL database at ${where}: ${sentence(message)}.`);
}
