// Publishing a report set so that a reader never sees a manifest that disagrees with the files beside
// it, even when the run is killed half-way (issue 13, item 7).
//
// Why not one directory renamed into place: several periods' sets share the output directory, each
// named by its period, so a set is a group of files in it, not a directory of its own. Instead:
// 1. every file is written and fsynced in a private staging directory inside the output directory
//    (`.flagtrail-report-<pid>-<random>`, same filesystem, so each move is an atomic rename);
// 2. the period's old manifest is removed first (and that removal made durable);
// 3. every data file is renamed into place;
// 4. the new manifest is renamed into place last.
// Killed before 2: the old manifest and its old files. Between 2 and 4: no manifest, so nothing claims
// anything (the files there are a mix of old and new). After 4: the new set. `verify --manifest` never
// sees a contradiction. A run stopped by SIGINT/SIGTERM removes its staging directory as it exits; one
// killed outright (SIGKILL, a power cut) leaves it, and a later run removes it (removeStale) once no
// process can still be writing into it: see removeStale for why not sooner.
import {
  chmodSync,
  closeSync,
  type Dirent,
  fchmodSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { FlagtrailError } from "../errors.ts";
import { makeDirs } from "../fs/makeDirs.ts";
import { pidIsAlive } from "../holders.ts";

const STAGING_PREFIX = ".flagtrail-report-";
const STAGING_NAME = /^\.flagtrail-report-(\d+)-[A-Za-z0-9]+$/;
/** `.<file>.partial`: where flagtrail before staging directories wrote a file before renaming it. */
const LEGACY_PARTIAL = /^\.(experiment-state-changes|config-edits|compliance|manifest)_.+\.partial$/;
/** Left alone for this long, a staging directory whose process is gone is a dead run's. */
const STALE_AFTER_MS = 60_000;
/** Left alone this long it is a dead run's whatever its pid says (reused, or another machine's). */
const ABANDONED_AFTER_MS = 3_600_000;

/** A publishing step, for tests that simulate a crash right before it. */
export type PublishStep = "remove old manifest" | `rename ${string}` | "remove staging";

/** Called before each publishing step; a test throws from it to stop the run there. */
export type PublishHook = (step: PublishStep) => void;

/**
 * Creates the output directory (and any missing parent) 0700, whatever the umask: reports name people
 * and their emails. An existing directory keeps its mode (the user chose it).
 */
export function makeOutDir(dir: string): void {
  try {
    makeDirs(dir, 0o700);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new FlagtrailError(`Cannot create the report directory ${dir} (${code}): ${whyNot(code)}.`, {
      cause: error,
    });
  }
}

/** The likely reason behind a failed mkdir or write, for the one sentence the user reads. */
function whyNot(code: string): string {
  if (code === "ENOTDIR" || code === "EEXIST") return "a file is in the way";
  if (code === "EACCES" || code === "EPERM") return "no permission to write there";
  if (code === "EROFS") return "the file system is read-only";
  if (code === "ENOSPC" || code === "EDQUOT") return "the disk is full";
  return "the file system refused it";
}

/**
 * Removes what killed runs left in `dir`: staging directories, and partial files of older versions.
 * A staging directory is a dead run's when nothing in it has changed for a minute and its pid is not a
 * live process here, or when nothing has changed for an hour whatever its pid says. Not sooner, and not
 * on the pid alone: the output directory may be a share that another machine's run stages into (its
 * pid means nothing here), and a pid is reused. "Changed" is the newest time of the directory and of
 * its files: a run writing a big CSV for minutes touches the file, not the directory.
 * Best effort: what cannot be read or removed stays, and the report goes on.
 */
export function removeStale(dir: string, now = Date.now()): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    try {
      const staging = entry.isDirectory() ? STAGING_NAME.exec(entry.name) : null;
      if (staging) {
        const age = now - lastChange(path);
        const gone = !pidIsAlive(Number(staging[1]));
        if ((gone && age > STALE_AFTER_MS) || age > ABANDONED_AFTER_MS)
          rmSync(path, { recursive: true, force: true });
      } else if (
        entry.isFile() &&
        LEGACY_PARTIAL.test(entry.name) &&
        now - statSync(path).mtimeMs > STALE_AFTER_MS
      ) {
        rmSync(path, { force: true });
      }
    } catch {
      // removed meanwhile by another run, or not ours to remove
    }
  }
}

/** The newest modification time of a staging directory and of the files in it. */
function lastChange(stagingDir: string): number {
  let newest = statSync(stagingDir).mtimeMs;
  for (const name of readdirSync(stagingDir)) {
    try {
      newest = Math.max(newest, statSync(join(stagingDir, name)).mtimeMs);
    } catch {
      // renamed out meanwhile by its run
    }
  }
  return newest;
}

/**
 * This process's staging directories, removed by one 'exit' listener (one for all: concurrent reports in
 * one process would pass the listener limit). The CLI ends a run stopped by SIGINT/SIGTERM at once,
 * which runs 'exit' listeners but no finally block.
 */
const stagingHere = new Set<string>();

function removeAllStaging(): void {
  for (const dir of stagingHere) rmSync(dir, { recursive: true, force: true });
}

/** A fresh staging directory (0700) inside `outDir`. */
export function createStaging(outDir: string): string {
  try {
    const dir = mkdtempSync(join(outDir, `${STAGING_PREFIX}${process.pid}-`));
    chmodSync(dir, 0o700);
    if (stagingHere.size === 0) process.on("exit", removeAllStaging);
    stagingHere.add(dir);
    return dir;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new FlagtrailError(`Cannot write into the report directory ${outDir} (${code}): ${whyNot(code)}.`, {
      cause: error,
    });
  }
}

export function removeStaging(dir: string): void {
  stagingHere.delete(dir);
  if (stagingHere.size === 0) process.off("exit", removeAllStaging);
  rmSync(dir, { recursive: true, force: true });
}

/** Writes a small file 0600 (whatever the umask) and makes it durable. */
export function writeDurable(path: string, text: string): void {
  const fd = openSync(path, "w", 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes a directory's entries (creations, renames, removals) durable. */
export function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a directory (EISDIR, EINVAL); a rename there is as durable as it gets.
  } finally {
    closeSync(fd);
  }
}

/**
 * Moves a complete, fsynced set from `staging` into `outDir`: old manifest out first, data files next,
 * the manifest last (see the top of this file). Leaves `staging` empty.
 */
export function publishReportSet(
  staging: string,
  outDir: string,
  files: { data: readonly string[]; manifest: string },
  hook: PublishHook = () => {},
): void {
  syncDirectory(staging);
  hook("remove old manifest");
  rmSync(join(outDir, files.manifest), { force: true });
  syncDirectory(outDir);
  for (const name of files.data) {
    hook(`rename ${name}`);
    renameSync(join(staging, name), join(outDir, name));
  }
  // Durable before the manifest appears: after a power cut too, no manifest without its files.
  syncDirectory(outDir);
  hook(`rename ${files.manifest}`);
  renameSync(join(staging, files.manifest), join(outDir, files.manifest));
  syncDirectory(outDir);
  hook("remove staging");
}
