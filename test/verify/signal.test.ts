// Issue 27: `verify` on a large SQLite store ignored SIGTERM until its walk had finished (the walk is
// synchronous reads), then printed "OK" anyway. Now it pauses every few hundred rows, so the signal
// ends it within milliseconds: exit 1, the one sentence, no "OK". The signal is sent once the child has
// read a good part of the store (its /proc read counter, against what start-up alone reads), not after
// a fixed sleep.
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { updateCoverageDigestIn, updateQuarantineDigestIn } from "../../src/store/digests.ts";
import { openStore } from "../../src/store/open.ts";
import { runCli } from "../helpers/runCli.ts";
import { tempDbPath } from "../helpers/simSync.ts";
import { createRecordWriter } from "../helpers/storeFixtures.ts";
import { makeRecord } from "../report/fixtures.ts";

const RECORDS = 3000;
/** Bytes of an extra raw field per record: verify re-hashes it, so the walk takes seconds. */
const PADDING = 40_000;
const canReadIo = existsSync("/proc/self/io");

let big: string;
let empty: string;

/** Bytes the process has read so far (rchar: page cache included), or null once it has gone. */
function bytesRead(pid: number): number | null {
  try {
    const match = /^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

async function waitFor(ready: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 120_000; waited += 20) {
    if (ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${what} not reached in time`);
}

beforeAll(async () => {
  if (!canReadIo) return;
  empty = tempDbPath("flagtrail-verify-signal-");
  openStore(empty).close();
  big = tempDbPath("flagtrail-verify-signal-");
  const store = openStore(big);
  const writer = createRecordWriter(store);
  const start = Date.UTC(2024, 2, 1, 12);
  for (let page = 0; page < RECORDS / 500; page += 1) {
    const records = Array.from({ length: 500 }, (_, i) => {
      const n = page * 500 + i;
      return {
        ...makeRecord({
          id: `S${String(n).padStart(21, "0")}`,
          at: start + n * 1000,
          actionType: "gate_update",
          name: `gate_${n}`,
        }),
        padding: "x".repeat(PADDING),
      };
    });
    await writer.writePage(records, { syncRunId: null, requestPath: "/test" }, async (_, q) => {
      await updateQuarantineDigestIn(q);
      await updateCoverageDigestIn(q);
    });
  }
  store.close();
}, 300_000);

describe.skipIf(!canReadIo)("flagtrail verify and SIGTERM", () => {
  it("stops a long walk within moments of SIGTERM: exit 1, one sentence, no OK", async () => {
    // What start-up and an empty store's verify read: the walk shows as reading well past it.
    let startup = 0;
    const watch = (child: ChildProcess) => {
      const timer = setInterval(() => {
        startup = Math.max(startup, bytesRead(child.pid ?? 0) ?? 0);
      }, 10);
      child.on("close", () => clearInterval(timer));
    };
    const small = await runCli(["verify", "--db", empty], { onSpawn: watch });
    expect(small.code, small.stderr).toBe(0);
    const threshold = startup + statSync(big).size / 4;

    // What it had read when it ended: sampled until then (the last sample is at most 10 ms old).
    let readAtEnd = 0;
    let signalled = false;
    const result = await runCli(["verify", "--db", big], {
      timeoutMs: 300_000,
      onSpawn: (child) => {
        const pid = child.pid ?? 0;
        const timer = setInterval(() => {
          readAtEnd = Math.max(readAtEnd, bytesRead(pid) ?? 0);
        }, 10);
        child.on("close", () => clearInterval(timer));
        void waitFor(
          () => (bytesRead(pid) ?? Number.POSITIVE_INFINITY) >= threshold,
          "verify reading the store",
        ).then(() => {
          signalled = true;
          child.kill("SIGTERM");
        });
      },
    });
    expect(signalled).toBe(true);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("flagtrail: stopped by SIGTERM; anything already stored is kept.\n");
    // It stopped soon after the signal, not at the end of its walk: signalled at a quarter of the store,
    // it read well under three quarters of it. A measure of work, not of time, so a loaded machine is
    // slower, not red (the walk pauses every few hundred rows, where the signal ends it).
    expect(readAtEnd - startup).toBeLessThan((statSync(big).size * 3) / 4);
  }, 300_000);
});
