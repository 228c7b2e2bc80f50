// A SQLite store's files as files, apart from the database in them (src/store/open.ts opens it): their
// modes, whether a failed open was a full file system, and what to say when there is none.
import { chmodSync, existsSync, statfsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { DEFAULT_DB_PATH } from "../config.ts";
import { DEMO_DEFAULTS } from "../demo/defaults.ts";
import { DiskFullError, FlagtrailError } from "../errors.ts";

/** A store made by hand or by an older flagtrail may be 0644 (-wal and -shm too): narrow our own files. */
export function makePrivate(path: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return; // no POSIX modes to narrow (Windows)
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (!existsSync(file)) continue;
    const { mode, uid: owner } = statSync(file);
    if ((mode & 0o077) !== 0 && owner === uid) chmodSync(file, mode & 0o700);
  }
}

// On a full disk a migration can fail as drizzle's "Failed to run the query 'ROLLBACK'": under 2 MiB free
// (a new store's schema alone takes ~1 MB), a failed open is taken for a full disk.
export function fullFileSystem(error: unknown, path: string): DiskFullError | undefined {
  try {
    const fs = statfsSync(dirname(path));
    return fs.bavail * fs.bsize < 2 * 1024 * 1024 ? new DiskFullError(path, { cause: error }) : undefined;
  } catch {
    return undefined;
  }
}

/** `path` is the default, with no store there but the demo's store beside it: right after `npm run demo`. */
export function defaultPathAfterDemo(path: string): boolean {
  return path === DEFAULT_DB_PATH && !existsSync(path) && existsSync(DEMO_DEFAULTS.db);
}

/**
 * No store at `path`. Right after `npm run demo` the read commands' default is not the demo's file, and
 * "run sync first" (which needs a key) sent a new user the wrong way: the demo's store is named too.
 */
export function noStore(path: string): FlagtrailError {
  const demo = defaultPathAfterDemo(path);
  return new FlagtrailError(
    `No flagtrail database at ${path}. Run \`flagtrail sync\` first${demo ? `, or give --db ${DEMO_DEFAULTS.db} to read the demo's` : ""}.`,
  );
}
