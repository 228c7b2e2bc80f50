// One report run at a time publishes into an output directory. Publishing is a series of renames (see
// publish.ts); two runs interleaving them could leave one run's manifest beside the other's files, and
// the check for an earlier report of the period must see what the other run published. The lock is a
// file created exclusively (O_EXCL) and holding `pid@host`; a holder that died leaves it behind, so a
// lock whose process is gone (on this host) or that is older than any publishing takes is taken over.
import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { FlagtrailError } from "../errors.ts";
import { isAlive } from "./publish.ts";

export const PUBLISH_LOCK_NAME = ".flagtrail-report.lock";
/** Publishing takes seconds at most: a lock this old is a dead run's, whoever it names. */
const ABANDONED_AFTER_MS = 10 * 60_000;
/** A lock still empty this long after it was made is a run that died between creating and writing it. */
const UNWRITTEN_AFTER_MS = 5_000;
const POLL_MS = 50;

export interface PublishLockOptions {
  /** How long to wait for another run's publishing. */
  waitMs?: number;
  now?: () => number;
}

/** Whether the lock at `path` was left by a run that is gone (false when it vanished meanwhile: retry). */
function isStale(path: string, now: number): boolean {
  let holder: string;
  let age: number;
  try {
    holder = readFileSync(path, "utf8");
    age = now - statSync(path).mtimeMs;
  } catch {
    return false;
  }
  if (age > ABANDONED_AFTER_MS) return true;
  const match = /^(\d+)@(.*)$/.exec(holder);
  if (!match) return age > UNWRITTEN_AFTER_MS;
  return match[2] === hostname() && !isAlive(Number(match[1]));
}

function tryCreate(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, `${process.pid}@${hostname()}`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Takes `outDir`'s publishing lock, waiting for another run's; returns the function that releases it. */
export async function lockPublishing(outDir: string, options: PublishLockOptions = {}): Promise<() => void> {
  const path = join(outDir, PUBLISH_LOCK_NAME);
  const now = options.now ?? Date.now;
  const deadline = now() + (options.waitMs ?? 60_000);
  for (;;) {
    if (tryCreate(path)) return () => rmSync(path, { force: true });
    if (isStale(path, now())) {
      rmSync(path, { force: true });
      continue;
    }
    if (now() >= deadline) {
      throw new FlagtrailError(
        `Another report run is publishing into ${outDir} (its lock ${path} is held); try again once it is done.`,
      );
    }
    await sleep(POLL_MS);
  }
}
