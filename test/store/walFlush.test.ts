import { existsSync, fstatSync, mkdtempSync, statSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { beginBulkLoad, finishBulkLoad } from "../../src/store/bulkLoad.ts";
import { openStore } from "../../src/store/open.ts";
import { flushWalInBackground } from "../../src/store/walFlush.ts";
import { runSync } from "../../src/sync/runSync.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { FakeConsoleClient } from "../helpers/fakeConsoleClient.ts";

const NOW = Date.UTC(2024, 5, 30, 12, 0, 0);

// The files (inode numbers) whose handles were flushed with datasync while a test ran. Spied on the
// FileHandle prototype: test files share their worker's modules (isolate: false), so a module mock of
// node:fs/promises would not reach a store module another file loaded first.
const flushed: number[] = [];
let spy: MockInstance | undefined;

beforeEach(async () => {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-walflush-"));
  const probe = await open(join(dir, "probe"), "w");
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const datasync = proto.datasync;
  spy = vi.spyOn(proto, "datasync").mockImplementation(async function (this: FileHandle) {
    flushed.push(fstatSync(this.fd).ino);
    return datasync.call(this);
  });
});

afterEach(() => {
  spy?.mockRestore();
  flushed.length = 0;
});

const tempDb = () => join(mkdtempSync(join(tmpdir(), "flagtrail-walflush-")), "flagtrail.db");

describe("the sync's write-ahead log flush", () => {
  it("writes the store's -wal file to disk in the background after the sync's batch commits", async () => {
    const path = tempDb();
    const store = openStore(path);
    try {
      const entries = Array.from({ length: 40 }, (_, i) => {
        const at = NOW - (i + 1) * 3_600_000;
        return { at, record: makeRecord(at) };
      });
      const summary = await runSync(store, new FakeConsoleClient(entries), {
        now: () => NOW,
        since: "2024-06-25",
        pageSize: 10,
        batchRecords: 10,
        entities: false,
      });
      expect(summary.inserted).toBe(40);
      const wal = statSync(`${path}-wal`).ino;
      await vi.waitFor(() => expect(flushed).toContain(wal), { timeout: 10_000 });
    } finally {
      store.close();
    }
  });

  it("writes the log to disk again once a bulk load has built its indexes", async () => {
    const path = tempDb();
    const store = openStore(path);
    try {
      expect(await beginBulkLoad(store)).toBe(true);
      expect(flushed).toEqual([]);
      expect(await finishBulkLoad(store)).toBe(true);
      const wal = statSync(`${path}-wal`).ino;
      await vi.waitFor(() => expect(flushed).toContain(wal), { timeout: 10_000 });
    } finally {
      store.close();
    }
  });

  it("flushes once more after the flush under way when commits come during it, not once per commit", async () => {
    const path = tempDb();
    const store = openStore(path);
    try {
      const wal = statSync(`${path}-wal`).ino;
      flushWalInBackground(path);
      flushWalInBackground(path);
      flushWalInBackground(path);
      await vi.waitFor(() => expect(flushed.filter((ino) => ino === wal)).toHaveLength(2), {
        timeout: 10_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(flushed.filter((ino) => ino === wal)).toHaveLength(2);
    } finally {
      store.close();
    }
  });

  it("neither creates a missing log nor throws, and skips an in-memory store", async () => {
    const path = tempDb();
    flushWalInBackground(path);
    flushWalInBackground(":memory:");
    // The missing file's open fails inside the flush: nothing is flushed, nothing is created.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(flushed).toEqual([]);
  });
});
