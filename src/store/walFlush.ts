// The sync's batches are committed to SQLite's write-ahead log (the -wal file), which the operating
// system writes to disk whenever it likes; the checkpoint when the store closes fsyncs the log before it
// copies it into the database. After a backfill that fsync waited at the very end for every page the
// load wrote (tens of MB: 0.5 s of a 50,000-record sync's wall time here). So after each commit the
// log's pages are handed to the disk in the background, one fdatasync at a time on libuv's thread pool,
// while the sync goes on fetching and preparing; the checkpoint then finds them written. This only adds
// a flush: SQLite's own syncs and its durability (WAL, synchronous=NORMAL) are unchanged.
import { open } from "node:fs/promises";

/** The stores (by file) whose log is being flushed: one flush at a time each, the next commit starts another. */
const flushing = new Set<string>();

/**
 * Starts writing the -wal file of the SQLite store at `path` to disk, unless a flush of it is under way.
 * Never throws and never creates the file: a log that is gone (checkpointed and removed) or unreadable
 * is simply not flushed.
 */
export function flushWalInBackground(path: string): void {
  if (path === ":memory:" || flushing.has(path)) return;
  flushing.add(path);
  void (async () => {
    // r+: opens an existing file only; fdatasync needs a writable handle on some systems (Windows).
    const file = await open(`${path}-wal`, "r+");
    try {
      await file.datasync();
    } finally {
      await file.close();
    }
  })()
    .catch(() => {})
    .finally(() => flushing.delete(path));
}
