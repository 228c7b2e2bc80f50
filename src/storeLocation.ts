// Where a store is: the `--db` / FLAGTRAIL_DB value read as a SQLite file path or a PostgreSQL URL.
// The URL may carry a password, so everything shown to a person goes through maskUrl(). Also what
// opening a location that holds no usable store refuses, in the same words on both engines, and the URL
// a PostgreSQL pool connects with (poolUrl).
import { basename, dirname, extname, join } from "node:path";
import { FlagtrailError, UsageError } from "./errors.ts";

export type StoreLocation =
  | { readonly engine: "sqlite"; readonly path: string }
  | { readonly engine: "postgres"; readonly url: string };

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
const POSTGRES_SCHEMES = new Set(["postgres", "postgresql"]);
/** Query parameters that node-postgres / libpq read as secrets. */
const SECRET_PARAMS = /([?&](?:password|sslpassword)=)[^&#]*/gi;

/**
 * `url` with its password (in the user info, or a `password=` parameter) shown as `***`. Works on the
 * text as given rather than through `new URL`, so that the rest reads exactly as the user wrote it,
 * including a malformed URL. Anything without `scheme://` (a file path) comes back unchanged.
 */
export function maskUrl(url: string): string {
  const scheme = SCHEME.exec(url);
  if (!scheme) return url;
  const start = scheme[0].length;
  const queryAt = url.slice(start).search(/[?#]/);
  const beforeQuery = queryAt === -1 ? url.length : start + queryAt;
  // The user info ends at the last "@" before the query: a password typed with a raw "@" or "/" is then
  // masked whole (masking too much is the safe side).
  const at = url.lastIndexOf("@", beforeQuery - 1);
  const colon = url.indexOf(":", start);
  const masked =
    at >= start && colon >= 0 && colon < at
      ? `${url.slice(0, colon)}:***${url.slice(at, beforeQuery)}`
      : url.slice(0, beforeQuery);
  return masked + url.slice(beforeQuery).replace(SECRET_PARAMS, "$1***");
}

/** `message` with the URL's password (as typed and percent-decoded) replaced by `***`. */
export function scrubSecret(message: string, url: string): string {
  let password = "";
  try {
    password = new URL(url).password;
  } catch {
    // A URL that does not parse never reached the driver; maskUrl below still covers its text.
  }
  let text = message.split(url).join(maskUrl(url));
  for (const secret of new Set([password, safeDecode(password)])) {
    if (secret.length > 0) text = text.split(secret).join("***");
  }
  return text;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Reads a store location. `postgres://` and `postgresql://` select PostgreSQL; any other `scheme://`
 * is refused (a typo such as `postgress://` or another engine's URL must not become a file of that name);
 * everything else is a SQLite file path (`:memory:` included).
 */
export function parseStoreLocation(value: string): StoreLocation {
  const scheme = SCHEME.exec(value)?.[1]?.toLowerCase();
  // `postgres:u:pw@host` (the slashes forgotten) would be a SQLite file named with the password, and
  // every message naming the store would show it; the rest is not repeated, as maskUrl cannot parse it.
  if (scheme === undefined && /^postgres(?:ql)?:/i.test(value)) {
    throw new UsageError(
      `Not a valid PostgreSQL URL: it starts with "${value.split(":")[0]}:" without "//" (the rest is not shown: ` +
        "it may hold a password); write postgres://user@host/database.",
    );
  }
  if (scheme === undefined) return { engine: "sqlite", path: value };
  if (!POSTGRES_SCHEMES.has(scheme)) {
    throw new UsageError(
      `Unsupported database ${maskUrl(value)}: give a SQLite file path or a postgres:// URL.`,
    );
  }
  if (!URL.canParse(value)) throw new UsageError(`Not a valid PostgreSQL URL: ${maskUrl(value)}.`);
  return { engine: "postgres", url: value };
}

/** How a location is shown to a person: the path, or the URL without its password. */
export function describeLocation(location: StoreLocation): string {
  return location.engine === "sqlite" ? location.path : maskUrl(location.url);
}

/** The engine's name as shown to a person. */
export function engineName(location: StoreLocation): string {
  return location.engine === "sqlite" ? "SQLite" : "PostgreSQL";
}

/** The file of a store kept on this machine (SQLite), or null for one on a server. */
export function localStoreFile(location: StoreLocation): string | null {
  return location.engine === "sqlite" ? location.path : null;
}

/** The files on this machine that hold the store's data (SQLite's file, WAL and shared memory); none for a server's. */
export function localStoreFiles(location: StoreLocation): string[] {
  const file = localStoreFile(location);
  return file === null ? [] : [file, `${file}-wal`, `${file}-shm`];
}

/** `flagtrail.db` → `flagtrail.eu.db`: the file next to the store's that holds project `project`. */
export function projectFilePath(storePath: string, project: string): string {
  const ext = extname(storePath);
  return join(dirname(storePath), `${basename(storePath, ext)}.${project}${ext}`);
}

/** A `--db` pointed by mistake at another application's database: refused, the database left untouched. */
export function foreignStore(where: string, database: string, tables: readonly string[]): FlagtrailError {
  const shown = tables.slice(0, 3).join(", ") + (tables.length > 3 ? ", …" : "");
  return new FlagtrailError(
    `${where} is another application's ${database}${shown ? ` (tables ${shown})` : ""}, not a flagtrail store; it was left untouched.`,
  );
}

/** A database with none of flagtrail's tables yet (a PostgreSQL database is there before its store). */
export function notAStore(where: string): FlagtrailError {
  return new FlagtrailError(`${where} is not a flagtrail database (no migrations applied).`);
}

/**
 * A read-only open cannot apply migrations, so a store an older flagtrail wrote would fail later on a
 * missing column: say so now, with what to do. A store a newer flagtrail migrated is refused by every
 * open: this version does not know what its later migrations changed. Decided by the newest applied
 * migration's time, as drizzle's migrator decides.
 */
export function assertMigrated(where: string, newestApplied: number | null, newestShipped: number): void {
  if (newestApplied === null) throw notAStore(where);
  if (newestApplied < newestShipped) {
    throw new FlagtrailError(
      `${where} was written by an older flagtrail; run \`flagtrail sync\` on it once to upgrade it.`,
    );
  }
  if (newestApplied > newestShipped) {
    throw new FlagtrailError(
      `${where} was written by a newer flagtrail; upgrade flagtrail to read or write it (it was left untouched).`,
    );
  }
}

// `url` with `settings` added to its startup `options` (a URL's own would replace the pool's), and sslmode
// prefer|require|verify-ca read as libpq does (node-postgres 8 reads them as verify-full).
export function poolUrl(url: string, settings: Readonly<Record<string, string>>): string {
  const parsed = new URL(url);
  const mode = parsed.searchParams.get("sslmode");
  const libpqSsl =
    ["prefer", "require", "verify-ca"].includes(mode ?? "") && !parsed.searchParams.has("uselibpqcompat");
  const entries = Object.entries(settings);
  if (entries.length === 0 && !libpqSsl) return url;
  if (libpqSsl) parsed.searchParams.set("uselibpqcompat", "true");
  if (entries.length > 0) {
    // libpq's options string separates on spaces; a backslash keeps one in a value.
    const escapeValue = (text: string) => text.replaceAll("\\", "\\\\").replaceAll(" ", "\\ ");
    const added = entries.map(([name, value]) => `-c ${name}=${escapeValue(value)}`).join(" ");
    const given = parsed.searchParams.get("options");
    parsed.searchParams.set("options", given ? `${given} ${added}` : added);
  }
  return parsed.toString();
}
