// Connection settings for anything that talks to the console API (sync, daemon, demo): flags win over
// environment variables, and every value is validated here so that later code can trust it.
import { readFileSync, statSync } from "node:fs";
import { z } from "zod";
import {
  asSentence,
  authHeaderSchema,
  baseUrlSchema,
  DEFAULT_AUTH_HEADER,
  DEFAULT_BASE_URL,
} from "./api/connection.ts";
import { UsageError } from "./errors.ts";

export const DEFAULT_DB_PATH = "./flagtrail.db";

/** What commander collected; every field optional because env and defaults fill the gaps. */
export interface ConnectionFlags {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  apiKeyFile?: string | undefined;
  authHeader?: string | undefined;
  db?: string | undefined;
  dbFile?: string | undefined;
}

export type Env = Readonly<Record<string, string | undefined>>;

const NO_KEY = "no API key: set FLAGTRAIL_API_KEY or FLAGTRAIL_API_KEY_FILE, or pass --api-key-file";

const syncConfigSchema = z.object({
  baseUrl: baseUrlSchema,
  apiKey: z.string({ message: NO_KEY }).trim().min(1, { message: NO_KEY }),
  authHeader: authHeaderSchema,
  dbPath: z.string().trim().min(1, { message: "the database path is empty" }),
});

export type SyncConfig = z.infer<typeof syncConfigSchema>;

function firstDefined(...values: (string | undefined)[]): string | undefined {
  return values.find((value) => value !== undefined && value !== "");
}

/**
 * The database path alone (status, sql, report need no key): --db, --db-file, FLAGTRAIL_DB, then
 * ./flagtrail.db. A file keeps a URL's password out of `ps`.
 */
export function resolveDbPath(flags: Pick<ConnectionFlags, "db" | "dbFile">, env: Env = process.env): string {
  const fromFile =
    flags.db === undefined && flags.dbFile ? readSecretFile(flags.dbFile, "database URL file") : undefined;
  // A --db given empty (often an unset shell variable) is refused, not read as absent: the default
  // store would be used instead of the one meant. An empty FLAGTRAIL_DB is unset, as usual for variables.
  const path = flags.db ?? fromFile ?? firstDefined(env.FLAGTRAIL_DB) ?? DEFAULT_DB_PATH;
  if (path.trim() === "") throw new UsageError("The database path is empty.");
  return path;
}

/**
 * Whether --db, --db-file or FLAGTRAIL_DB names the store, rather than resolveDbPath falling back to
 * ./flagtrail.db: a store named is one the user expects to be used.
 */
export function storeNamed(flags: Pick<ConnectionFlags, "db" | "dbFile">, env: Env = process.env): boolean {
  return (flags.db ?? flags.dbFile ?? firstDefined(env.FLAGTRAIL_DB)) !== undefined;
}

const warnedKeyFiles = new Set<string>();

/**
 * A key file other users can read is still used, but said once on stderr, as ssh says it of a private
 * key: the key is as exposed as on a command line.
 */
export function warnIfKeyFileOpen(
  path: string,
  write: (line: string) => void = (line) => process.stderr.write(line),
): void {
  if (warnedKeyFiles.has(path)) return;
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return; // the read that follows names the problem
  }
  if ((mode & 0o077) === 0) return;
  warnedKeyFiles.add(path);
  const octal = mode.toString(8).padStart(4, "0");
  write(
    `flagtrail: warning: the API key file ${path} is readable by other users (mode ${octal}); chmod 600 it.\n`,
  );
}

/**
 * A key kept in a file (a secrets mount, a 0600 file): its contents, trimmed. Never echoed, not even
 * in part, when it cannot be read or holds nothing.
 */
function readKeyFile(path: string): string {
  warnIfKeyFileOpen(path);
  return readSecretFile(path, "API key file");
}

/** A secret's file (`what` names it in messages), trimmed; never echoed when unreadable or empty. */
function readSecretFile(path: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new UsageError(`Cannot read the ${what} ${path} (${code}).`);
  }
  const value = text.trim();
  if (value === "") throw new UsageError(`The ${what} ${path} is empty.`);
  return value;
}

/**
 * The key, flags before environment: --api-key, --api-key-file, FLAGTRAIL_API_KEY,
 * FLAGTRAIL_API_KEY_FILE. A file is read only when nothing before it gave a key.
 */
function resolveApiKey(flags: ConnectionFlags, env: Env): string | undefined {
  const sources: (() => string | undefined)[] = [
    () => flags.apiKey,
    () => (flags.apiKeyFile ? readKeyFile(flags.apiKeyFile) : undefined),
    () => env.FLAGTRAIL_API_KEY,
    () => (env.FLAGTRAIL_API_KEY_FILE ? readKeyFile(env.FLAGTRAIL_API_KEY_FILE) : undefined),
  ];
  for (const source of sources) {
    const key = source();
    if (key !== undefined && key !== "") return key;
  }
  return undefined;
}

/**
 * Everything a sync needs to reach the API and the store. Missing key or a non-http(s) URL is a
 * UsageError (exit 2). The key is returned for the client only: never log or store this object whole.
 */
export function resolveSyncConfig(flags: ConnectionFlags, env: Env = process.env): SyncConfig {
  const result = syncConfigSchema.safeParse({
    baseUrl: firstDefined(flags.baseUrl, env.FLAGTRAIL_BASE_URL, DEFAULT_BASE_URL),
    apiKey: resolveApiKey(flags, env),
    authHeader: firstDefined(flags.authHeader, env.FLAGTRAIL_AUTH_HEADER, DEFAULT_AUTH_HEADER),
    dbPath: resolveDbPath(flags, env),
  });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const text = issue?.message ?? "invalid connection settings";
  throw new UsageError(asSentence(text));
}

/**
 * Optional tuning of the API client from the environment (tests and unusual deployments):
 * FLAGTRAIL_RATE_LIMITS="100/10000,900/900000" (requests/window ms), FLAGTRAIL_RETRY_BASE_MS,
 * FLAGTRAIL_RETRY_THROTTLED_BASE_MS, FLAGTRAIL_RETRY_MAX_DELAY_MS, FLAGTRAIL_RETRY_MAX_ATTEMPTS,
 * FLAGTRAIL_TIMEOUT_MS. Unset variables leave the client's defaults.
 */
export interface ClientTuning {
  rateLimits?: { limit: number; windowMs: number }[];
  baseDelayMs?: number;
  throttledBaseDelayMs?: number;
  maxDelayMs?: number;
  maxAttempts?: number;
  timeoutMs?: number;
}

const nonNegativeInt = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, { message: `${name} must be a whole number` })
    .transform(Number)
    .optional();

const rateLimitsText = z
  .string()
  .regex(/^\d+\/\d+(,\d+\/\d+)*$/, {
    message: "FLAGTRAIL_RATE_LIMITS must look like 100/10000,900/900000 (requests/window ms)",
  })
  .transform((text) =>
    text.split(",").map((part) => {
      const [limit, windowMs] = part.split("/").map(Number);
      return { limit: limit ?? 1, windowMs: windowMs ?? 1 };
    }),
  )
  .refine((windows) => windows.every((w) => w.limit > 0 && w.windowMs > 0), {
    message: "FLAGTRAIL_RATE_LIMITS values must be positive",
  })
  .optional();

const tuningSchema = z.object({
  FLAGTRAIL_RATE_LIMITS: rateLimitsText,
  FLAGTRAIL_RETRY_BASE_MS: nonNegativeInt("FLAGTRAIL_RETRY_BASE_MS"),
  FLAGTRAIL_RETRY_THROTTLED_BASE_MS: nonNegativeInt("FLAGTRAIL_RETRY_THROTTLED_BASE_MS"),
  FLAGTRAIL_RETRY_MAX_DELAY_MS: nonNegativeInt("FLAGTRAIL_RETRY_MAX_DELAY_MS"),
  FLAGTRAIL_RETRY_MAX_ATTEMPTS: nonNegativeInt("FLAGTRAIL_RETRY_MAX_ATTEMPTS"),
  FLAGTRAIL_TIMEOUT_MS: nonNegativeInt("FLAGTRAIL_TIMEOUT_MS"),
});

export function resolveClientTuning(env: Env = process.env): ClientTuning {
  const pick = (key: keyof z.input<typeof tuningSchema>) => (env[key] === "" ? undefined : env[key]);
  const result = tuningSchema.safeParse({
    FLAGTRAIL_RATE_LIMITS: pick("FLAGTRAIL_RATE_LIMITS"),
    FLAGTRAIL_RETRY_BASE_MS: pick("FLAGTRAIL_RETRY_BASE_MS"),
    FLAGTRAIL_RETRY_THROTTLED_BASE_MS: pick("FLAGTRAIL_RETRY_THROTTLED_BASE_MS"),
    FLAGTRAIL_RETRY_MAX_DELAY_MS: pick("FLAGTRAIL_RETRY_MAX_DELAY_MS"),
    FLAGTRAIL_RETRY_MAX_ATTEMPTS: pick("FLAGTRAIL_RETRY_MAX_ATTEMPTS"),
    FLAGTRAIL_TIMEOUT_MS: pick("FLAGTRAIL_TIMEOUT_MS"),
  });
  if (!result.success) throw new UsageError(`${result.error.issues[0]?.message ?? "invalid tuning"}.`);
  const t = result.data;
  const tuning: ClientTuning = {};
  if (t.FLAGTRAIL_RATE_LIMITS) tuning.rateLimits = t.FLAGTRAIL_RATE_LIMITS;
  if (t.FLAGTRAIL_RETRY_BASE_MS !== undefined) tuning.baseDelayMs = t.FLAGTRAIL_RETRY_BASE_MS;
  if (t.FLAGTRAIL_RETRY_THROTTLED_BASE_MS !== undefined)
    tuning.throttledBaseDelayMs = t.FLAGTRAIL_RETRY_THROTTLED_BASE_MS;
  if (t.FLAGTRAIL_RETRY_MAX_DELAY_MS !== undefined) tuning.maxDelayMs = t.FLAGTRAIL_RETRY_MAX_DELAY_MS;
  if (t.FLAGTRAIL_RETRY_MAX_ATTEMPTS !== undefined) tuning.maxAttempts = t.FLAGTRAIL_RETRY_MAX_ATTEMPTS;
  if (t.FLAGTRAIL_TIMEOUT_MS !== undefined) tuning.timeoutMs = t.FLAGTRAIL_TIMEOUT_MS;
  return tuning;
}
