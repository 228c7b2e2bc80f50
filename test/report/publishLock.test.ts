// The publishing lock of a report directory: one run at a time moves its set into place; a lock left by
// a run that died is taken over; a live one is waited for, then refused with one sentence.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lockPublishing, PUBLISH_LOCK_NAME } from "../../src/report/publishLock.ts";

const outDir = () => mkdtempSync(join(tmpdir(), "flagtrail-lock-"));

describe("lockPublishing", () => {
  it("holds pid@host and a token while held and removes the lock on release", async () => {
    const dir = outDir();
    const release = await lockPublishing(dir);
    expect(readFileSync(join(dir, PUBLISH_LOCK_NAME), "utf8")).toMatch(
      new RegExp(`^${process.pid}@${hostname()} [0-9a-f]{12}$`),
    );
    release();
    expect(existsSync(join(dir, PUBLISH_LOCK_NAME))).toBe(false);
  });

  it("makes a second run wait until the first releases", async () => {
    const dir = outDir();
    const releaseFirst = await lockPublishing(dir);
    const order: string[] = [];
    const second = lockPublishing(dir).then((release) => {
      order.push("second took it");
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    order.push("first releases");
    releaseFirst();
    (await second)();
    expect(order).toEqual(["first releases", "second took it"]);
  });

  it("takes over a lock whose process is gone, or that is older than any publishing", async () => {
    const dir = outDir();
    const lock = join(dir, PUBLISH_LOCK_NAME);
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    writeFileSync(lock, `${gone}@${hostname()}`);
    (await lockPublishing(dir, { waitMs: 0 }))();
    // Another host's live-looking lock, abandoned an hour ago.
    writeFileSync(lock, `${process.pid}@another-host`);
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lock, hourAgo, hourAgo);
    (await lockPublishing(dir, { waitMs: 0 }))();
    expect(existsSync(lock)).toBe(false);
  });

  it("refuses with one sentence when a live run keeps it past the wait", async () => {
    const dir = outDir();
    writeFileSync(join(dir, PUBLISH_LOCK_NAME), `${process.pid}@another-host`);
    await expect(lockPublishing(dir, { waitMs: 120 })).rejects.toThrow(
      `Another report run is publishing into ${dir} (its lock ${join(dir, PUBLISH_LOCK_NAME)} is held); try again once it is done.`,
    );
    expect(readFileSync(join(dir, PUBLISH_LOCK_NAME), "utf8")).toBe(`${process.pid}@another-host`);
  });
  it("lets only one of two runs take over a stale lock that both judged stale", async () => {
    const dir = outDir();
    const lock = join(dir, PUBLISH_LOCK_NAME);
    writeFileSync(lock, `${spawnSync(process.execPath, ["-e", "0"]).pid}@${hostname()}`);
    let resume = () => {};
    const paused = new Promise<void>((resolve) => {
      resume = resolve;
    });
    // The first run judges the dead run's lock stale, then stalls before taking it over...
    const first = lockPublishing(dir, { waitMs: 300, beforeTakeover: () => paused });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // ...while a second run takes it over and holds it.
    const releaseSecond = await lockPublishing(dir, { waitMs: 0 });
    const held = readFileSync(lock, "utf8");
    resume();
    await expect(first).rejects.toThrow("Another report run is publishing");
    expect(readFileSync(lock, "utf8")).toBe(held);
    expect(readdirSync(dir)).toEqual([PUBLISH_LOCK_NAME]);
    releaseSecond();
    expect(existsSync(lock)).toBe(false);
  });

  it("does not remove the lock of a run that took over after its own was judged abandoned", async () => {
    const dir = outDir();
    const lock = join(dir, PUBLISH_LOCK_NAME);
    const releaseFirst = await lockPublishing(dir);
    const longAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lock, longAgo, longAgo);
    const releaseSecond = await lockPublishing(dir, { waitMs: 0 });
    releaseFirst();
    expect(existsSync(lock)).toBe(true);
    releaseSecond();
    expect(existsSync(lock)).toBe(false);
  });

  it("waits for a lock still being written, and takes over one left empty or unreadable", async () => {
    const dir = outDir();
    const lock = join(dir, PUBLISH_LOCK_NAME);
    writeFileSync(lock, "");
    await expect(lockPublishing(dir, { waitMs: 100 })).rejects.toThrow("Another report run is publishing");
    for (const content of ["", "not a holder", "0@host", `@${hostname()}`]) {
      writeFileSync(lock, content);
      const tenSecondsAgo = new Date(Date.now() - 10_000);
      utimesSync(lock, tenSecondsAgo, tenSecondsAgo);
      (await lockPublishing(dir, { waitMs: 0 }))();
      expect(existsSync(lock)).toBe(false);
    }
  });

  it("takes over a lock naming this process that this process does not hold (a restart with the same pid)", async () => {
    const dir = outDir();
    writeFileSync(join(dir, PUBLISH_LOCK_NAME), `${process.pid}@${hostname()}`);
    (await lockPublishing(dir, { waitMs: 0 }))();
    expect(existsSync(join(dir, PUBLISH_LOCK_NAME))).toBe(false);
  });

  it("makes a second take in the same process wait for the first", async () => {
    const dir = outDir();
    const release = await lockPublishing(dir);
    await expect(lockPublishing(dir, { waitMs: 100 })).rejects.toThrow("Another report run is publishing");
    release();
  });
});
