// The one lease heartbeat of sync and the daemon (src/heartbeat.ts): a renewal that fails transiently
// is tried again at the next beat; the lease is given up only when lost or once the TTL has passed without
// a successful renewal.
import { describe, expect, it } from "vitest";
import { LockedError } from "../src/errors.ts";
import { startHeartbeat } from "../src/heartbeat.ts";

/** Resolves once `ready` holds, polling every 20 ms (beats come every 333 ms here). */
async function until(ready: () => boolean): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 20) {
    if (ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("condition not reached in time");
}

describe("the lease heartbeat", () => {
  it("keeps beating after a transient failure", async () => {
    const missed: unknown[] = [];
    const lost: LockedError[] = [];
    let calls = 0;
    const heartbeat = startHeartbeat({
      renew: async () => {
        calls += 1;
        if (calls === 1) throw Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
      },
      ttlMs: 1_000,
      onMissed: (error) => missed.push(error),
      onLost: (error) => lost.push(error),
    });
    try {
      await until(() => calls >= 3);
    } finally {
      heartbeat.stop();
    }
    expect(missed.map((e) => (e as Error).message)).toEqual(["database is locked"]);
    expect(lost).toEqual([]);
  });

  it("gives the lease up at once when it is lost", async () => {
    const lost: LockedError[] = [];
    const gone = new LockedError("The sync lease was lost to another process.");
    let calls = 0;
    startHeartbeat({
      renew: async () => {
        calls += 1;
        throw gone;
      },
      ttlMs: 1_000,
      onLost: (error) => lost.push(error),
    });
    await until(() => lost.length > 0);
    expect(calls).toBe(1);
    expect(lost).toEqual([gone]);
  });

  it("gives the lease up once its TTL has passed without a successful renewal", async () => {
    let clock = 0;
    const missed: unknown[] = [];
    const lost: LockedError[] = [];
    startHeartbeat({
      renew: async () => {
        throw new Error("connection reset");
      },
      ttlMs: 1_000,
      now: () => clock,
      onMissed: (error) => missed.push(error),
      onLost: (error) => lost.push(error),
    });
    await until(() => missed.length >= 2);
    expect(lost).toEqual([]);
    clock = 1_000;
    await until(() => lost.length > 0);
    expect(lost[0]).toBeInstanceOf(LockedError);
    expect(lost[0]?.message).toMatch(/^The lease was not renewed for 1 s/);
    expect((lost[0]?.cause as Error).message).toBe("connection reset");
  });
});
