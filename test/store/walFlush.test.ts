import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

// Each open of a -wal file and what was done with the handle, as the flush does it.
const opened = vi.hoisted(() => [] as { path: string; flags: string; synced: boolean; closed: boolean }[]);
vi.mock("node:fs/promises", async (original) => {
  const fs = await original<typeof import("node:fs/promises")>();
  return {
    ...fs,
    open: async (path: string, flags: string) => {
      const handle = await fs.open(path, flags);
      if (!String(path).endsWith("-wal")) return handle;
      const entry = { path: String(path), flags, synced: false, closed: false };
      opened.push(entry);
      return {
        datasync: async () => {
          await handle.datasync();
          entry.synced = true;
        },
        close: async () => {
          await handle.close();
          entry.closed = true;
        },
      };
    },
  };
});

const { openStore } = await import("../../src/store/open.ts");
const { flushWalInBackground } = await import("../../src/store/walFlush.ts");
const { runSync } = await import("../../src/sync/runSync.ts");
const { makeRecord } = await import("../helpers/auditRecords.ts");
const { FakeConsoleClient } = await import("../helpers/fakeConsoleClient.ts");

const NOW = Date.UTC(2024, 5, 30, 12, 0, 0);

afterEach(() => {
  opened.length = 0;
});

/** Waits until every flush started has closed its handle (they run on libuv's thread pool). */
async function flushesSettled(): Promise<void> {
  await vi.waitFor(() => expect(opened.every((entry) => entry.closed)).toBe(true), { timeout: 10_000 });
}

describe("the sync's write-ahead log flush", () => {
  it("writes the store's -wal file to disk in the background after the sync's batch commits", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-walflush-")), "flagtrail.db");
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
      await vi.waitFor(() => expect(opened.length).toBeGreaterThan(0), { timeout: 10_000 });
      await flushesSettled();
      expect(opened.every((entry) => entry.path === `${path}-wal` && entry.flags === "r+")).toBe(true);
      expect(opened.every((entry) => entry.synced)).toBe(true);
    } finally {
      store.close();
    }
  });

  it("neither creates a missing log nor throws, and skips an in-memory store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-walflush-"));
    const { existsSync } = await import("node:fs");
    flushWalInBackground(join(dir, "none.db"));
    flushWalInBackground(":memory:");
    // The missing file's open fails inside the flush: nothing is recorded, nothing is created.
    await new Promise((resolve) => setImmediate(resolve));
    await flushesSettled();
    expect(existsSync(join(dir, "none.db-wal"))).toBe(false);
    expect(opened).toEqual([]);
  });
});
