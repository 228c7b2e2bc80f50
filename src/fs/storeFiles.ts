// A SQLite store's files as files, apart from the database in them (src/store/open.ts opens it): their
// modes, and whether a failed open was a full file system.
import { chmodSync, existsSync, statfsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { DiskFullError } from "../errors.ts";

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
