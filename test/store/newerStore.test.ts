// Defect seen by trying the CLI as a new user (helper h40): a store a newer flagtrail wrote (a migration
// this flagtrail does not ship is recorded as applied) is read and written as if it were current:
// `doctor` says "current: the store has every migration this flagtrail ships", `status` reads it and
// `sync` writes into it. assertMigrated (src/storeLocation.ts) refuses only an older store. A newer one
// must be refused in one sentence too (upgrade flagtrail), before anything is written.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { simEnv, syncedTestStore } from "../helpers/simSync.ts";

describe("a store written by a newer flagtrail", () => {
  let sim: RunningSimulator;
  let db: string;

  beforeAll(async () => {
    ({ sim, db } = await syncedTestStore());
    const raw = new Database(db);
    try {
      // What a later flagtrail's next migration leaves: one more applied row, newer than any shipped.
      raw
        .prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-a-newer-flagtrail', ?)")
        .run(Date.now() + 365 * 86_400_000);
    } finally {
      raw.close();
    }
  });

  afterAll(async () => {
    await sim?.close();
  });

  it("is refused by status in one sentence naming a newer flagtrail", async () => {
    const status = await runCliInProcess(["status"], { env: simEnv(sim, db) });
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/newer flagtrail/);
  });

  it("is refused by sync, which stores nothing", async () => {
    sim.control.insertAtHead(5);
    const sync = await runCliInProcess(["sync", "--quiet"], { env: simEnv(sim, db) });
    expect(sync.code).toBe(1);
    expect(sync.stderr).toMatch(/newer flagtrail/);
  });
});
