// `flagtrail doctor`'s checks of the local set-up, each one line: ok, warn or fail with what was found.
// Nothing here writes: the store is opened read-only and the key is tried with one small request
// (src/doctor/keyProbe.ts). A check that cannot run says why instead of throwing.
import { existsSync, readFileSync, statfsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import type { Env } from "../config.ts";
import { parseControlsConfig, sinkSecretEnv } from "../controls/config.ts";
import { FlagtrailError } from "../errors.ts";
import { DEFAULT_PROJECT, parseConfigFile } from "../projects.ts";
import { signingKeyFromEnv } from "../signingKey.ts";
import { type AnyStore, openAnyStore, sqliteFreeSpace } from "../store/openAny.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../store/projectStores.ts";
import {
  describeLocation,
  engineName,
  localStoreFile,
  localStoreFiles,
  parseStoreLocation,
  projectFilePath,
} from "../storeLocation.ts";
import { shellWord } from "../text/shellWord.ts";
import { chainHeadLine } from "./chainHead.ts";

type CheckStatus = "ok" | "warn" | "fail";

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
}

const check = (name: string, status: CheckStatus, detail: string): Check => ({ name, status, detail });

/** The lowest Node.js version package.json's `engines` allows (`>=20.18.1`). */
function minimumNode(): string {
  const pkg = createRequire(import.meta.url)("../../package.json") as { engines?: { node?: string } };
  return /(\d+\.\d+\.\d+)/.exec(pkg.engines?.node ?? "")?.[1] ?? "0.0.0";
}

function versionAtLeast(actual: string, minimum: string): boolean {
  const a = actual.split(".").map(Number);
  const m = minimum.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (m[i] ?? 0)) return (a[i] ?? 0) > (m[i] ?? 0);
  }
  return true;
}

export function checkNode(version = process.versions.node): Check {
  const minimum = minimumNode();
  return versionAtLeast(version, minimum)
    ? check("node", "ok", `v${version} (needs >= ${minimum})`)
    : check("node", "fail", `v${version} is older than the ${minimum} flagtrail needs`);
}

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

/** Free pages worth a warning: over both (a small store's few free pages are normal churn). */
const FREE_PAGES_WARN = { share: 0.25, bytes: 64 * MIB };

/**
 * The store opens read-only, its migrations are this flagtrail's, its free pages and whether the next sync
 * builds on its chain head (src/doctor/chainHead.ts) with the signing keys of `env`.
 */
export async function checkStore(
  dbValue: string,
  freeWarn = FREE_PAGES_WARN,
  env: Env = process.env,
): Promise<Check[]> {
  const location = parseStoreLocation(dbValue);
  const where = describeLocation(location);
  const file = localStoreFile(location);
  if (file !== null && !existsSync(file)) {
    return [
      check("store", "warn", `no store at ${where} yet; the first \`flagtrail sync\` creates it`),
      check("migrations", "warn", "not checked: there is no store"),
      check("free pages", "ok", "no store to check"),
      check("chain head", "ok", "no store to check"),
    ];
  }
  let home: AnyStore;
  try {
    home = await openAnyStore(dbValue, { readonly: true });
  } catch (error) {
    const message = messageOf(error);
    if (/older flagtrail|no migrations applied/.test(message))
      return [
        check("store", "ok", `${where} opens`),
        check("migrations", "fail", message),
        // The upgrade's sync may copy a table and free pages: look again after it.
        check("free pages", "warn", "not checked until the store is upgraded (see migrations)"),
        check("chain head", "warn", "not checked until the store is upgraded (see migrations)"),
      ];
    return [
      check("store", "fail", message),
      check("migrations", "warn", "not checked: the store did not open"),
      check("free pages", "warn", "not checked: the store did not open"),
      check("chain head", "warn", "not checked: the store did not open"),
    ];
  }
  return [
    check("store", "ok", `${where} opens (${engineName(location)})`),
    check("migrations", "ok", "current: the store has every migration this flagtrail ships"),
    ...(await checkParts(dbValue, home, freeWarn, env)),
  ];
}

const messageOf = (error: unknown) => (error instanceof FlagtrailError ? error.message : String(error));

/**
 * Free pages, then the chain head, one line per project of the store: each project's history may be a file
 * of its own (docs/projects.md). `home`, the store's own namespace checkStore opened, is handed over
 * (closed with the others).
 */
async function checkParts(
  dbValue: string,
  home: AnyStore,
  warn: typeof FREE_PAGES_WARN,
  env: Env,
): Promise<Check[]> {
  let parts: ProjectStore[];
  try {
    parts = await openStoreProjects(dbValue, { readonly: true, home });
  } catch (error) {
    const detail = `not checked: ${messageOf(error)}`;
    return [check("free pages", "warn", detail), check("chain head", "warn", detail)];
  }
  const label = (project: string) => (parts.length > 1 ? ` (${project})` : "");
  try {
    const lines = parts.map(({ project, store }) => freePagesLine(label(project), store, warn));
    for (const { project, store } of parts) lines.push(await chainHeadLine(label(project), store, env));
    return lines;
  } finally {
    await closeProjectStores(parts);
  }
}

const size = (bytes: number) =>
  bytes >= GIB ? `${(bytes / GIB).toFixed(1)} GiB` : `${(bytes / MIB).toFixed(1)} MiB`;

/**
 * Pages a migration's table copy or deletes left free stay in the file (later syncs reuse them); only
 * VACUUM shrinks it, and it rewrites the whole file, so it is worth saying only when much is free.
 */
function freePagesLine(label: string, store: AnyStore, warn: typeof FREE_PAGES_WARN): Check {
  const name = `free pages${label}`;
  const space = sqliteFreeSpace(store);
  if (space === null)
    return check(name, "ok", "not checked here: PostgreSQL's autovacuum manages its free space");
  const { fileBytes, freeBytes } = space;
  const share = fileBytes === 0 ? 0 : freeBytes / fileBytes;
  const text = `${size(freeBytes)} (${freeBytes} bytes, ${Math.round(share * 100)} %) of the ${size(fileBytes)} file are free pages`;
  if (share <= warn.share || freeBytes <= warn.bytes) return check(name, "ok", text);
  // VACUUM copies the database into a temporary file, in TMPDIR (often a small /tmp) unless SQLITE_TMPDIR
  // says where: there it fails "database or disk is full" whatever the store's disk has free.
  const command = `SQLITE_TMPDIR=${shellWord(dirname(store.location))} sqlite3 ${shellWord(store.location)} VACUUM`;
  return check(
    name,
    "warn",
    `${text}; \`${command}\` gives them back, run while nothing writes (no sync or daemon) with up to ${size(2 * fileBytes)} free disk there (twice the file: the WAL, and its copy, which SQLite would otherwise make in the temporary directory, often a small /tmp)`,
  );
}

/** Free space where a SQLite store lives (a PostgreSQL store's disk is the server's). */
export function checkDisk(dbValue: string): Check {
  const file = localStoreFile(parseStoreLocation(dbValue));
  if (file === null) return check("disk", "ok", "not checked here: PostgreSQL keeps the data on its server");
  const dir = dirname(resolve(file));
  try {
    const fs = statfsSync(dir);
    const free = fs.bavail * fs.bsize;
    const text = `${(free / GIB).toFixed(1)} GiB free in ${dir}`;
    if (free < 0.1 * GIB) return check("disk", "fail", `${text}; a sync needs room for its records and WAL`);
    return check("disk", free < GIB ? "warn" : "ok", text);
  } catch (error) {
    return check(
      "disk",
      "warn",
      `cannot read free space in ${dir} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
}

/**
 * With a projects config, the files beside the store's that hold each project's history (and their -wal,
 * -shm) and each project's `apiKeyFile`; none when the config does not parse (the config line says why).
 */
export function projectFiles(dbValue: string, configFile: string | undefined): string[] {
  if (configFile === undefined) return [];
  const store = localStoreFile(parseStoreLocation(dbValue));
  try {
    const { projects = {} } = parseConfigFile(readFileSync(configFile, "utf8"), configFile);
    return Object.entries(projects).flatMap(([name, project]) => {
      const file = store === null ? null : projectFilePath(store, name);
      const history = file === null ? [] : [file, `${file}-wal`, `${file}-shm`];
      return project.apiKeyFile === undefined ? history : [...history, project.apiKeyFile];
    });
  } catch {
    return [];
  }
}

/** Files that hold audit history or a key must not be readable by other users. */
export function checkModes(dbValue: string, keyFiles: readonly string[]): Check {
  const files = [...localStoreFiles(parseStoreLocation(dbValue)), ...keyFiles].filter((file) =>
    existsSync(file),
  );
  if (files.length === 0) return check("file modes", "ok", "no store or key file to check");
  const open = files
    .map((file) => ({ file, mode: statSync(file).mode & 0o777 }))
    .filter(({ mode }) => (mode & 0o077) !== 0);
  if (open.length === 0)
    return check("file modes", "ok", `${files.length} file(s) readable by their owner only`);
  const list = open.map(({ file, mode }) => `${file} (${mode.toString(8).padStart(4, "0")})`).join(", ");
  return check("file modes", "warn", `readable by others: ${list}; chmod 600 them`);
}

export function checkSigningKey(env: Env): Check {
  return signingKeyFromEnv(env)
    ? check("signing key", "ok", "FLAGTRAIL_SIGNING_KEY is set: manifests and the chain head are signed")
    : check(
        "signing key",
        "warn",
        "FLAGTRAIL_SIGNING_KEY is not set: report manifests are unsigned and verify cannot check the chain head's signature",
      );
}

/** The file alone: a missing key is the key line's business (a file without projects uses the flags'). */
export function checkConfig(file: string | undefined): Check {
  if (file === undefined)
    return check("config", "ok", "none: one project, default, from flags and environment");
  try {
    const { projects } = parseConfigFile(readFileSync(file, "utf8"), file);
    const names = projects === undefined ? [DEFAULT_PROJECT] : Object.keys(projects);
    return check("config", "ok", `${file}: ${names.length} project(s): ${names.join(", ")}`);
  } catch (error) {
    const message =
      error instanceof FlagtrailError
        ? error.message
        : `cannot read ${file} (${(error as NodeJS.ErrnoException).code})`;
    return check("config", "fail", message);
  }
}

/**
 * Every sink's secret can be read: an unset variable or unreadable file fails each alert or batch it
 * should carry, found out only when a finding comes.
 */
export function checkSinkSecrets(file: string | undefined, env: Env): Check {
  let sinks: ReturnType<typeof parseControlsConfig>["sinks"];
  try {
    sinks = file === undefined ? [] : parseControlsConfig(readFileSync(file, "utf8"), file).sinks;
  } catch (error) {
    // Its controls or sinks cannot be read: check and the daemon would stop on it too.
    return check("sink secrets", "fail", error instanceof FlagtrailError ? error.message : String(error));
  }
  const missing: string[] = [];
  for (const sink of sinks) {
    for (const name of sinkSecretEnv(sink))
      if (name !== undefined && !env[name]) missing.push(`${sink.name} (${name})`);
    const file = "secretFile" in sink ? sink.secretFile : "tokenFile" in sink ? sink.tokenFile : undefined;
    if (file !== undefined && !readable(file)) missing.push(`${sink.name} (its secret's file)`);
  }
  if (sinks.length === 0) return check("sink secrets", "ok", "no sinks configured");
  return missing.length === 0
    ? check("sink secrets", "ok", `every secret of ${sinks.length} sink(s) is set`)
    : check(
        "sink secrets",
        "warn",
        `not set or unreadable, so their alerts cannot be sent: ${missing.join(", ")}`,
      );
}

function readable(path: string): boolean {
  try {
    return readFileSync(path, "utf8").trim() !== "";
  } catch {
    return false;
  }
}
