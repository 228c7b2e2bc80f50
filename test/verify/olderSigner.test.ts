// A store last synced with the key by an older flagtrail (before chain:head_signed_seq): it signs the
// head it moved on to and leaves the signed seq where a newer flagtrail put it. verify with the key
// passes, but the next sync took the signature for one over the stale seq and refused for good ("records
// were removed"), on a store nobody touched: a rollback to the older version and back, or two hosts on
// different versions. Checked by hand with the CLI of 6875d2a (the merge before h68); here its write is
// what that version's batch did: the signature over the new head, and nothing else. Real CLI otherwise.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signChainHead } from "../../src/digests.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath } from "../helpers/simSync.ts";

const KEY = "older-signer-key";
let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startTestSimulator({ records: 60, days: 10, timeZone: "UTC" });
});
afterAll(async () => {
  await sim?.close();
});

const sync = (db: string, keys: Record<string, string>) =>
  runCliInProcess(["sync", "--since", daysAgo(12), "--no-entities", "--quiet", "--json"], {
    env: simEnv(sim, db, keys),
  });

/** The older flagtrail's keyed batch: records appended, the head signed, chain:head_signed_seq untouched. */
async function syncAsOlderVersion(db: string): Promise<void> {
  const appended = await sync(db, {});
  expect(appended.code, appended.stderr).toBe(0);
  const store = new Database(db);
  try {
    const head = store
      .prepare("SELECT seq, chain_hash AS chainHash FROM audit_logs ORDER BY seq DESC LIMIT 1")
      .get() as { seq: number; chainHash: string };
    store
      .prepare("UPDATE meta SET value = ? WHERE key = 'chain:head_signature'")
      .run(signChainHead(head, KEY));
  } finally {
    store.close();
  }
}

describe("a head signed by an older flagtrail after a newer one", () => {
  it("is accepted by the next keyed sync, which stores the new records", async () => {
    const db = tempDbPath("flagtrail-older-signer-");
    const first = await sync(db, { FLAGTRAIL_SIGNING_KEY: KEY });
    expect(first.code, first.stderr).toBe(0);
    sim.control.insertAtHead(3);
    await syncAsOlderVersion(db);
    const verified = await runCliInProcess(["verify", "--db", db], { env: { FLAGTRAIL_SIGNING_KEY: KEY } });
    expect(verified.code, verified.stderr).toBe(0);

    sim.control.insertAtHead(2);
    const next = await sync(db, { FLAGTRAIL_SIGNING_KEY: KEY });
    expect(next.stderr).toBe("");
    expect(next.code).toBe(0);
    expect(JSON.parse(next.stdout).inserted).toBe(2);
    const after = await runCliInProcess(["verify", "--db", db], { env: { FLAGTRAIL_SIGNING_KEY: KEY } });
    expect(after.code, after.stderr).toBe(0);
  });
});
