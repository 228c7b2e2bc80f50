// Creating a directory and its missing parents without Node's recursive mkdir: on a path it cannot
// create under (`/proc/x`), `mkdirSync(…, { recursive: true })` loops forever at 100% CPU and ignores
// SIGTERM. Here each missing directory is made once, from the first existing ancestor down, so the
// first refusal is an ordinary error.
import { chmodSync, lstatSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * Makes `dir` and its missing parents with `mode` set exactly (mkdir's mode is narrowed by the umask;
 * chmod widens it back). Existing directories keep their mode. Returns the directories made, top first.
 * Throws the file system's error (ENOTDIR when a file is in the way, EACCES, ENOENT on /proc …).
 */
export function makeDirs(dir: string, mode: number): string[] {
  const missing: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (exists(d)) break;
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) {
    mkdirSync(d, { mode });
    chmodSync(d, mode);
  }
  return missing;
}

/** Whether `path` exists; a file in the way counts (mkdir below it then fails with ENOTDIR). */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}
