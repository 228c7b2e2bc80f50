// An entity read that returns an invalid item quarantines it and folds the quarantine rows above the
// digest's lastId into it (src/store/entityWrites.ts). A record batch refuses to fold rows added there
// behind flagtrail's back (src/chainChecks.ts), but the entity write folded them in and verify passed: in
// a `sync --entities-only` nothing else runs first. The store is the real CLI's against the simulator;
// the simulator serves no invalid entity item, so the entity write is the sync's own store call.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IntegrityError } from "../../src/errors.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { openStore } from "../../src/store/syncStore.ts";
import { storeExperimentSnapshots } from "../../src/sync/entityChanges.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath } from "../helpers/simSync.ts";

let sim: RunningSimulator;
beforeAll(async () => {
  sim = await startTestSimulator({ records: 60, days: 5, timeZone: "UTC" });
});
afterAll(async () => {
  await sim?.close();
});

const badRead = {
  kind: "layer_experiments",
  key: "layer9",
  outcome: "ok" as const,
  items: 1,
  invalid: 1,
  invalidItems: [{ raw: { id: "bad" }, issues: [] } as never],
  requestPath: "/layers/layer9/experiments",
};

describe("an entity write over a quarantine row added outside flagtrail", () => {
  it("is refused, writes nothing, and verify still names the row", async () => {
    const db = tempDbPath("flagtrail-entity-quarantine-");
    const sync = await runCliInProcess(["sync", "--since", daysAgo(6), "--quiet"], { env: simEnv(sim, db) });
    expect(sync.code, sync.stderr).toBe(0);
    const attacker = new Database(db);
    attacker
      .prepare(
        `INSERT INTO quarantine (record_id, raw, raw_hash, issues, request_path, received_at)
         VALUES ('forged', '{}', 'forged-hash', '[]', '/forged', 1)`,
      )
      .run();
    attacker.close();
    const before = await runCliInProcess(["verify", "--db", db]);
    expect(before.code).toBe(1);

    const store = await openStore(db);
    try {
      const write = storeExperimentSnapshots(
        store,
        "layer9",
        [{ id: "x", name: "x", status: "active", raw: {} }],
        {
          runId: null,
          now: Date.now(),
          read: badRead,
        },
      );
      await expect(write).rejects.toThrow(IntegrityError);
      await expect(write).rejects.toThrow(/quarantine table holds rows above id/);
    } finally {
      await store.close();
    }
    const reader = new Database(db, { readonly: true });
    const quarantined = reader.prepare("SELECT count(*) AS n FROM quarantine").get() as { n: number };
    const snapshots = reader
      .prepare("SELECT count(*) AS n FROM experiment_snapshots WHERE layer_id = 'layer9'")
      .get() as { n: number };
    reader.close();
    expect({ quarantined: quarantined.n, snapshots: snapshots.n }).toEqual({ quarantined: 1, snapshots: 0 });
    const after = await runCliInProcess(["verify", "--db", db]);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/quarantine/i);
  });
});
