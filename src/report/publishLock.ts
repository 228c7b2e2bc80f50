// One report run at a time publishes into an output directory. Publishing is a series of renames (see
// publish.ts); two runs interleaving them could leave one run's manifest beside the other's files, and
// the check for an earlier report of the period must see what the other run published. The lock is a
// file created exclusively (O_EXCL) and holding `pid@host token`; a holder that died leaves it behind, so
// a lock whose process is gone (on this host) or that is older than any publishing takes is taken over.
// The token tells one lock from the next: a file system reuses a removed file's inode at once.
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { FlagtrailError } from "../errors.ts";
import { pidIsAlive } from "../holders.ts";

export const PUBLISH_LOCK_NAME = ".flagtrail-report.lock";
/** Publishing takes seconds at most: a lock this old is a dead run's, whoever it names. */
const ABANDONED_AFTER_MS = 10 * 60_000;
/** A lock still empty this long after it was made is a run that died between creating and writing it. */
const UNWRITTEN_AFTER_MS = 5_000;
const POLL_MS = 50;

/** What a lock file says (`pid@host token`, the token absent in older versions' locks): read from disk. */
const holderSchema = z
  .string()
  .regex(/^\d+@[^\s@]+( \S+)?$/)
  .transform((text) => {
    const owner = text.split(" ")[0] ?? "";
    const at = owner.indexOf("@");
    return { pid: Number(owner.slice(0, at)), host: owner.slice(at + 1) };
  })
  .pipe(z.object({ pid: z.number().int().positive(), host: z.string() }));

/**
 * The locks this process holds: path → content. A lock naming our own pid that is not here is a dead
 * predecessor's: a restarted container gets the same pid on the same host (often pid 1).
 */
const heldHere = new Map<string, string>();

export interface PublishLockOptions {
  /** How long to wait for another run's publishing. */
  waitMs?: number;
  now?: () => number;
  /** Tests only: runs between judging a lock stale and taking it over, where another run may act. */
  beforeTakeover?: () => Promise<void>;
}

/** One lock file as read through one descriptor: its content and age belong to the same file. */
interface LockFile {
  mtimeMs: number;
  holder: string;
}

function readLock(path: string): LockFile | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    return { mtimeMs: fstatSync(fd).mtimeMs, holder: readFileSync(fd, "utf8") };
  } finally {
    closeSync(fd);
  }
}

/** Whether `lock` was left by a run that is gone. */
function isStale(path: string, lock: LockFile, now: number): boolean {
  const age = now - lock.mtimeMs;
  if (age > ABANDONED_AFTER_MS) return true;
  const parsed = holderSchema.safeParse(lock.holder);
  if (!parsed.success) return age > UNWRITTEN_AFTER_MS;
  const { pid, host } = parsed.data;
  if (host !== hostname()) return false;
  if (pid === process.pid) return heldHere.get(path) !== lock.holder;
  return !pidIsAlive(pid);
}

/**
 * Removes the stale `judged` lock. Renaming it aside first makes the takeover safe when several runs
 * judged it at once: only one rename moves it; a later one moves whatever lock the winner made since,
 * which it sees by the content and puts back.
 */
function takeOver(path: string, judged: LockFile): void {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (readFileSync(aside, "utf8") !== judged.holder) {
    try {
      linkSync(aside, path);
    } catch {
      // A third run created a lock in the instant between: it holds the directory now.
    }
  }
  rmSync(aside, { force: true });
}

/** Creates the lock if none exists; returns its content, or null when another run holds one. */
function tryCreate(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return null;
    throw error;
  }
  const holder = `${process.pid}@${hostname()} ${randomBytes(6).toString("hex")}`;
  try {
    writeSync(fd, holder);
    return holder;
  } finally {
    closeSync(fd);
  }
}

/** Removes the lock only if it is still the one this run made (a takeover may have replaced it). */
function release(path: string, holder: string): void {
  heldHere.delete(path);
  if (heldHere.size === 0) process.off("exit", releaseAll);
  try {
    if (readFileSync(path, "utf8") === holder) rmSync(path, { force: true });
  } catch {
    // already gone
  }
}

/** Every lock this process holds, released as it exits (one 'exit' listener for all of them). */
function releaseAll(): void {
  for (const [path, holder] of [...heldHere]) release(path, holder);
}

/** Takes `outDir`'s publishing lock, waiting for another run's; returns the function that releases it. */
export async function lockPublishing(outDir: string, options: PublishLockOptions = {}): Promise<() => void> {
  const path = resolve(join(outDir, PUBLISH_LOCK_NAME));
  const now = options.now ?? Date.now;
  const deadline = now() + (options.waitMs ?? 60_000);
  for (;;) {
    const holder = tryCreate(path);
    if (holder !== null) {
      // A run stopped by SIGINT/SIGTERM ends at once (the CLI's signal handler), without its finally blocks.
      if (heldHere.size === 0) process.on("exit", releaseAll);
      heldHere.set(path, holder);
      return () => release(path, holder);
    }
    const lock = readLock(path);
    if (lock === null) continue;
    if (isStale(path, lock, now())) {
      await options.beforeTakeover?.();
      takeOver(path, lock);
      continue;
    }
    if (now() >= deadline) {
      throw new FlagtrailError(
        `Another report run is publishing into ${outDir} (its lock ${join(outDir, PUBLISH_LOCK_NAME)} is held); try again once it is done.`,
      );
    }
    await sleep(POLL_MS);
  }
}
