// Issue 27 defect 3: deleting a digest key from meta (with the rows it would have shown) silenced
// verify ("no digest in meta to check against"), even with FLAGTRAIL_SIGNING_KEY, on SQLite and on
// PostgreSQL. Every sync writes both digests, so a missing one is tampering; only a store that holds
// nothing at all passes without them. Tampering goes straight through the database, as an attacker's would.
// One SQLite store is synced (spawned) and copied for each test; the first verify of each engine is
// spawned, the others run the CLI in this process.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { openStore } from "../../src/store/open.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import {
  copySqliteStore,
  daysAgo,
  simEnv,
  startTestSimulator,
  tempDbPath,
  withDb,
} from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "../pg/cluster.ts";

const KEY = "missing-digest-key";
let sim: RunningSimulator;
/** A SQLite store synced once; each SQLite test tampers with its own copy. */
let syncedSqlite: string;

beforeAll(async () => {
  sim = await startTestSimulator({ records: 300, days: 20, faults: { malformedRate: 0.03 } });
  syncedSqlite = tempDbPath("flagtrail-missing-digest-");
  await syncedStore(syncedSqlite, runCli);
});
afterAll(async () => {
  await sim?.close();
});

/** A store synced from the simulator with the signing key: records, quarantine rows, coverage rows. */
async function syncedStore(db: string, run = runCliInProcess): Promise<void> {
  const result = await run(["sync", "--since", daysAgo(22), "--no-entities", "--quiet"], {
    env: simEnv(sim, db, { FLAGTRAIL_SIGNING_KEY: KEY }),
  });
  expect(result.code, result.stderr).toBe(0);
}

async function verify(db: string, key?: string, run = runCliInProcess) {
  return run(["verify", "--db", db], { env: key ? { FLAGTRAIL_SIGNING_KEY: key } : {} });
}

function expectMissing(result: { code: number | null; stderr: string }, key: string): void {
  expect(result.code).toBe(1);
  expect(result.stderr.trim().split("\n")).toHaveLength(1);
  expect(result.stderr).toContain(`The digest in meta ${key}`);
  expect(result.stderr).toContain("was removed");
}

const TAMPER = {
  quarantine: ["DELETE FROM quarantine", "DELETE FROM meta WHERE key = 'chain:quarantine'"],
  coverage: [
    "DELETE FROM coverage WHERE day = (SELECT min(day) FROM coverage)",
    "DELETE FROM meta WHERE key = 'chain:coverage'",
  ],
} as const;

describe("a missing digest on SQLite", () => {
  for (const [table, statements] of Object.entries(TAMPER)) {
    it(`fails verify when ${table} rows and chain:${table} are deleted, with and without the key`, async () => {
      const db = await copySqliteStore(syncedSqlite);
      const before = await verify(db, KEY);
      expect(before.code, before.stderr).toBe(0);
      const attacker = new Database(db);
      const removed = statements.map((s) => attacker.prepare(s).run().changes);
      attacker.close();
      expect(removed.every((n) => n > 0)).toBe(true);
      // The first table's verify spawned (end to end), the other's in this process.
      const run = table === "quarantine" ? runCli : runCliInProcess;
      expectMissing(await verify(db, undefined, run), `chain:${table}`);
      expectMissing(await verify(db, KEY), `chain:${table}`);
    });
  }

  it("a sync writes both digests even when a table is empty (no coverage check, nothing quarantined)", async () => {
    const clean = await startTestSimulator({ records: 50, days: 10 });
    try {
      const db = tempDbPath("flagtrail-missing-digest-");
      const run = await runCliInProcess(
        ["sync", "--since", daysAgo(12), "--no-entities", "--no-coverage", "--quiet"],
        {
          env: simEnv(clean, db),
        },
      );
      expect(run.code, run.stderr).toBe(0);
      const meta = withDb(db, (sqlite) =>
        sqlite.prepare("SELECT key, value FROM meta WHERE key LIKE 'chain:%' ORDER BY key").all(),
      );
      expect(meta).toEqual([
        { key: "chain:coverage", value: JSON.stringify({ rows: 0, digest: "0".repeat(64) }) },
        { key: "chain:quarantine", value: JSON.stringify({ rows: 0, lastId: 0, digest: "0".repeat(64) }) },
      ]);
      const ok = await verify(db);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain(
        "quarantine: 0 rows match their digest; coverage: 0 rows match their digest",
      );
    } finally {
      await clean.close();
    }
  });

  it("passes a store that holds nothing at all (never synced)", async () => {
    const store = openStore(":memory:");
    try {
      expect(await verifyStore(store)).toMatchObject({
        records: 0,
        quarantine: { rows: 0, digest: "absent" },
        coverage: { rows: 0, digest: "absent" },
      });
    } finally {
      store.close();
    }
  });
});

describe("a missing digest on PostgreSQL", () => {
  it("fails verify when quarantine rows and chain:quarantine, or chain:coverage, are deleted", async () => {
    expect(inject("pgUrl")).toMatch(/^postgres/);
    const url = await freshDatabase("digest");
    await syncedStore(url, runCli);
    const before = await verify(url, KEY);
    expect(before.code, before.stderr).toBe(0);
    for (const statement of TAMPER.quarantine) await queryOnce(url, statement);
    expectMissing(await verify(url, KEY, runCli), "chain:quarantine");

    const other = await freshDatabase("digest");
    await syncedStore(other);
    await queryOnce(other, TAMPER.coverage[1]);
    expectMissing(await verify(other), "chain:coverage");
  });
});
