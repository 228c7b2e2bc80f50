import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readStatus } from "../../src/commands/storeStatus.ts";
import { LockedError } from "../../src/errors.ts";
import { leaseHolder } from "../../src/holders.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { acquireLease, readLease, releaseLease, renewLease } from "../../src/store/leases.ts";
import { openStore } from "../../src/store/open.ts";

function tempDb() {
  return join(mkdtempSync(join(tmpdir(), "flagtrail-lease-")), "t.db");
}

describe("leases", () => {
  it("refuses a held lease and frees it on release", async () => {
    const path = tempDb();
    const a = openStore(path);
    const b = openStore(path);
    await acquireLease(a, "sync", leaseHolder("a"), 60_000, 1000);
    await expect(acquireLease(b, "sync", leaseHolder("b"), 60_000, 2000)).rejects.toThrow(LockedError);
    expect((await readLease(b, "sync"))?.holder).toBe(leaseHolder("a"));
    expect(await releaseLease(a, "sync", leaseHolder("a"))).toBe(true);
    expect((await acquireLease(b, "sync", leaseHolder("b"), 60_000, 3000)).lease.holder).toBe(
      leaseHolder("b"),
    );
    a.close();
    b.close();
  });

  it("lets an expired lease be taken over, and the old holder can no longer renew it", async () => {
    const store = openStore(":memory:");
    await acquireLease(store, "sync", "otherhost/1/a", 1000, 0);
    const result = await acquireLease(store, "sync", "otherhost/2/b", 1000, 5000);
    expect(result.tookOver?.holder).toBe("otherhost/1/a");
    await expect(renewLease(store, "sync", "otherhost/1/a", 1000, 5001)).rejects.toThrow(LockedError);
    expect((await renewLease(store, "sync", "otherhost/2/b", 1000, 5001)).expiresAt).toBe(6001);
  });

  it("lets a lease whose process is dead on this host be taken over before it expires", async () => {
    const store = openStore(":memory:");
    const dead = spawnSync(process.execPath, ["-e", "process.pid"]).pid!;
    sqliteOf(store)
      .prepare("INSERT INTO leases (name, holder, pid, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?)")
      .run("sync", leaseHolder("sync", dead), dead, 0, Date.now() + 3_600_000);
    expect((await acquireLease(store, "sync", leaseHolder("sync"), 1000)).tookOver?.pid).toBe(dead);
  });

  it("does not take a live lease of another host before expiry", async () => {
    const store = openStore(":memory:");
    sqliteOf(store)
      .prepare("INSERT INTO leases (name, holder, pid, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?)")
      .run("sync", "elsewhere/999999/sync", 999999, 0, 10_000);
    await expect(acquireLease(store, "sync", leaseHolder("sync"), 1000, 5000)).rejects.toThrow(
      /Another sync is running on this database \(process 999999, elsewhere\), held until 1970-01-01T00:00:10.000Z/,
    );
  });

  it("status does not show a lease whose process died as a running sync", async () => {
    const store = openStore(":memory:");
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
    expect(dead).toBeTypeOf("number");
    const far = Date.now() + 3_600_000;
    const insert = sqliteOf(store).prepare(
      "INSERT OR REPLACE INTO leases (name, holder, pid, acquired_at, expires_at) VALUES ('sync', ?, ?, 0, ?)",
    );
    insert.run(leaseHolder("sync", dead), dead, far);
    expect((await readStatus(store)).runningLease).toBeNull();
    insert.run(leaseHolder("sync"), process.pid, far);
    expect((await readStatus(store)).runningLease).toMatchObject({ pid: process.pid });
    store.close();
  });
});
