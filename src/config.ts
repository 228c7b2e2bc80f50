// Connection settings for anything that talks to the console API (sync, daemon, demo): flags win over
// environment variables, and every value is validated here so that later code can trust it.
import { z } from "zod";
import { UsageError } from "./errors.ts";

export const DEFAULT_BASE_URL = "https://statsigapi.net";
export const DEFAULT_AUTH_HEADER = "STATSIG-API-KEY";
export const DEFAULT_DB_PATH = "./flagtrail.db";

/** What commander collected; every field optional because env and defaults fill the gaps. */
export interface ConnectionFlags {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  authHeader?: string | undefined;
  db?: string | undefined;
}

export type Env = Readonly<Record<string, string | undefined>>;

const httpUrl = z
  .string()
  .trim()
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return url.protocol === "http:" || url.protocol === "https:";
      } catch {
        return false;
      }
    },
    { message: "the base URL must be an http:// or https:// address" },
  )
  // Paths are joined onto it (/console/v1/…): a trailing slash would double up.
  .transform((value) => value.replace(/\/+$/, ""));

// An HTTP header name is a token (RFC 9110): no spaces, colons or control characters.
const headerName = z
  .string()
  .trim()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { message: "the auth header must be a valid HTTP header name" });

const syncConfigSchema = z.object({
  baseUrl: httpUrl,
  apiKey: z
    .string({ message: "no API key: pass --api-key or set FLAGTRAIL_API_KEY" })
    .trim()
    .min(1, { message: "no API key: pass --api-key or set FLAGTRAIL_API_KEY" }),
  authHeader: headerName,
  dbPath: z.string().trim().min(1, { message: "the database path is empty" }),
});

export type SyncConfig = z.infer<typeof syncConfigSchema>;

function firstDefined(...values: (string | undefined)[]): string | undefined {
  return values.find((value) => value !== undefined && value !== "");
}

/** The database path alone (status, sql, report need no key): --db, then FLAGTRAIL_DB, then ./flagtrail.db. */
export function resolveDbPath(flags: Pick<ConnectionFlags, "db">, env: Env = process.env): string {
  const path = firstDefined(flags.db, env.FLAGTRAIL_DB, DEFAULT_DB_PATH) ?? DEFAULT_DB_PATH;
  if (path.trim() === "") throw new UsageError("The database path is empty.");
  return path;
}

/**
 * Everything a sync needs to reach the API and the store. Missing key or a non-http(s) URL is a
 * UsageError (exit 2). The key is returned for the client only: never log or store this object whole.
 */
export function resolveSyncConfig(flags: ConnectionFlags, env: Env = process.env): SyncConfig {
  const result = syncConfigSchema.safeParse({
    baseUrl: firstDefined(flags.baseUrl, env.FLAGTRAIL_BASE_URL, DEFAULT_BASE_URL),
    apiKey: firstDefined(flags.apiKey, env.FLAGTRAIL_API_KEY),
    authHeader: firstDefined(flags.authHeader, env.FLAGTRAIL_AUTH_HEADER, DEFAULT_AUTH_HEADER),
    dbPath: resolveDbPath(flags, env),
  });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const text = issue?.message ?? "invalid connection settings";
  throw new UsageError(`${text.charAt(0).toUpperCase()}${text.slice(1)}.`);
}
