// The sync's batches are committed to SQLite's write-ahead log (the -wal file), which the operating
// system writes to disk whenever it likes; the checkpoint when the store closes fsyncs the log before it
// copies it into the database. After a backfill that fsync waited at the very end for every page the
// load wrote (tens of MB: 0.5 s of a 50,000-record sync's wall time here). So after each commit the
// log's pages are handed to the disk in the background, one fdatasync at a time on libuv's thread pool,
// while the sync goes on fetching and preparing; the checkpoint then finds them written. This only adds
// a flush: SQLite's own syncs and its durability (WAL, synchronous=NORMAL) are unchanged.
import { open } from "node:fs/promises";

/**
 * The stores (by file) whose log is being flushed, and whether a commit came during that flush: one
 * flush at a time each, and one more after it for what the later commits wrote.
 */
const flushing = new Map<string, { again: boolean }>();

/**
 * Starts writing the -wal file of the SQLite store at `path` to disk (after the flush under way, if
 * any). Never throws and never creates the file: a log that is gone (checkpointed and removed) or
 * unreadable is simply not flushed.
 */
export function flushWalInBackground(path: string): void {
  if (path === ":memory:") return;
  const running = flushing.get(path);
  if (running) {
    running.again = true;
    return;
  }
  const state = { again: false };
  flushing.set(path, state);
  void flushOnce(path).finally(() => {
    flushing.delete(path);
    if (state.again) flushWalInBackground(path);
  });
}

async function flushOnce(path: string): Promise<void> {
  try {
    // r+: opens an existing file only; fdatasync needs a writable handle on some systems (Windows).
    const file = await open(`${path}-wal`, "r+");
    try {
      await file.datasync();
    } finally {
      await file.close();
    }
  } catch {
    // Only a head start for the checkpoint's own fsync: nothing to report.
  }
}
