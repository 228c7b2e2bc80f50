// Rotating FLAGTRAIL_SIGNING_KEY: the sync checks the chain head's signature before it writes (it must not
// re-sign a chain cut at its end), so a new key alone is refused, with a sentence naming the way out; the
// old key given as FLAGTRAIL_SIGNING_KEY_PREVIOUS lets the next sync accept the head once and sign it with
// the new key, after which verify passes with the new key. Real CLI against the simulator.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath } from "../helpers/simSync.ts";

const OLD_KEY = "rotation-old-key";
const NEW_KEY = "rotation-new-key";
let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startTestSimulator({ records: 120, days: 10, timeZone: "UTC" });
});
afterAll(async () => {
  await sim?.close();
});

const sync = (db: string, keys: Record<string, string>) =>
  runCliInProcess(["sync", "--since", daysAgo(12), "--no-entities", "--quiet", "--json"], {
    env: simEnv(sim, db, keys),
  });
const verify = (db: string, key: string) =>
  runCliInProcess(["verify", "--db", db], { env: { FLAGTRAIL_SIGNING_KEY: key } });
const newRecords = (prefix: string) =>
  sim.control.append(
    Array.from({ length: 3 }, (_, i) => ({
      at: sim.control.now(),
      name: `${prefix}${i}`,
      actionType: "gate_update",
    })),
  );

describe("rotating the signing key", () => {
  it("refuses a new key alone, and signs anew with the previous key given once", async () => {
    const db = tempDbPath("flagtrail-rotation-");
    const first = await sync(db, { FLAGTRAIL_SIGNING_KEY: OLD_KEY });
    expect(first.code, first.stderr).toBe(0);
    expect((await verify(db, OLD_KEY)).code).toBe(0);

    newRecords("rot_a");
    const refused = await sync(db, { FLAGTRAIL_SIGNING_KEY: NEW_KEY });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/signature does not match/);
    expect(refused.stderr).toMatch(/FLAGTRAIL_SIGNING_KEY_PREVIOUS/);
    // Neither key is ever printed.
    expect(refused.stderr + refused.stdout).not.toMatch(/rotation-(old|new)-key/);

    const rotated = await sync(db, {
      FLAGTRAIL_SIGNING_KEY: NEW_KEY,
      FLAGTRAIL_SIGNING_KEY_PREVIOUS: OLD_KEY,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout).inserted).toBe(3);
    expect((await verify(db, NEW_KEY)).code).toBe(0);
    expect((await verify(db, OLD_KEY)).code).toBe(1);

    // From then on the new key alone is enough; a previous key left set changes nothing but a warning.
    newRecords("rot_b");
    const after = await sync(db, {
      FLAGTRAIL_SIGNING_KEY: NEW_KEY,
      FLAGTRAIL_SIGNING_KEY_PREVIOUS: "unrelated",
    });
    expect(after.code, after.stderr).toBe(0);
    expect((await verify(db, NEW_KEY)).code).toBe(0);
    // The rotation is done: an old key still set is named, so that it is removed.
    expect(JSON.parse(after.stdout).warningMessages).toContainEqual(
      expect.stringMatching(/FLAGTRAIL_SIGNING_KEY_PREVIOUS is set but the chain head is already signed/),
    );
    expect(JSON.parse(rotated.stdout).warningMessages ?? []).not.toContainEqual(
      expect.stringMatching(/FLAGTRAIL_SIGNING_KEY_PREVIOUS is set/),
    );
  });
});
