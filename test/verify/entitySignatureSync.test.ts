// The real CLI's sync and verify with FLAGTRAIL_SIGNING_KEY over the entity chain's signed head, on SQLite
// and PostgreSQL: entity rows cut off the end with entity_chain:head rewritten to match are named by
// verify and refused by the next sync (it would link over them and sign the shorter chain); a store whose
// entity head is not signed (written before flagtrail signed it, or the signature removed) is warned
// about and signed by the next sync, even one with no entity to read. Tampering straight through the
// database, as an attacker's would be.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "../pg/cluster.ts";

const KEY = "entity-sync-signing-key";
let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startTestSimulator({ records: 150, days: 10, timeZone: "UTC" });
});
afterAll(async () => {
  await sim?.close();
});

const sync = (db: string, ...extra: string[]) => syncWith(db, { FLAGTRAIL_SIGNING_KEY: KEY }, ...extra);
const syncWith = (db: string, keys: Record<string, string>, ...extra: string[]) =>
  runCliInProcess(["sync", "--since", daysAgo(12), "--quiet", ...extra], { env: simEnv(sim, db, keys) });
const verify = (db: string, key?: string) =>
  runCliInProcess(["verify", "--db", db], { env: key ? { FLAGTRAIL_SIGNING_KEY: key } : {} });

async function tamper(db: string, ...statements: string[]): Promise<void> {
  if (db.startsWith("postgres")) {
    for (const statement of statements) await queryOnce(db, statement);
    return;
  }
  const attacker = new Database(db);
  try {
    for (const statement of statements) attacker.prepare(statement).run();
  } finally {
    attacker.close();
  }
}

const TABLES = ["config_versions", "config_version_revisions", "experiment_snapshots", "metric_snapshots"];
const UNION = TABLES.map((t) => `SELECT entity_seq, entity_chain_hash FROM ${t}`).join(" UNION ALL ");
/** The last entity row deleted, and meta's mirror rewritten to the row before it (both engines' SQL). */
const CUT_THE_END = [
  ...TABLES.map((t) => `DELETE FROM ${t} WHERE entity_seq = (SELECT max(entity_seq) FROM (${UNION}) u)`),
  `UPDATE meta SET value = (SELECT '{"seq":' || entity_seq || ',"hash":"' || entity_chain_hash || '"}'
     FROM (${UNION}) u ORDER BY entity_seq DESC LIMIT 1) WHERE key = 'entity_chain:head'`,
];

async function keyedStore(engine: "sqlite" | "pg"): Promise<string> {
  const db = engine === "pg" ? await freshDatabase("entsigsync") : tempDbPath("flagtrail-entsigsync-");
  const first = await sync(db);
  expect(first.code, first.stderr).toBe(0);
  const ok = await verify(db, KEY);
  expect(ok.code, ok.stderr).toBe(0);
  expect(ok.stdout).toMatch(/entity chain of \d+ rows intact \([^)]*, signature valid\)/);
  return db;
}

/** A config edit on the server: its new version and its audit record (the next sync reads and links both). */
function editConfig(): void {
  const name = sim.entities.configNames()[1]!;
  const at = sim.control.now();
  sim.entities.plantVersion(
    name,
    { defaultValue: { limit: at } },
    { id: "actorActorActor00002", name: "Eve", email: "" },
    at,
  );
  sim.control.append([{ at, name, actionType: "config_default_value_update", changeLog: "Updated" }]);
}

for (const engine of ["sqlite", "pg"] as const) {
  describe(`sync and verify over the entity chain's signed head, ${engine}`, () => {
    it("entity rows cut off the end with the mirror rewritten: verify with the key names it, the sync refuses", async () => {
      const db = await keyedStore(engine);
      await tamper(db, ...CUT_THE_END);
      // Without the key the shorter chain is valid: only the signature shows the cut.
      expect((await verify(db)).code).toBe(0);
      const message = /entity chain head's HMAC-SHA256 signature does not match/;
      const before = await verify(db, KEY);
      expect(before.code).toBe(1);
      // verify names the row the signature was made over, as the refused sync below does.
      expect(before.stderr).toMatch(
        /does not match the entity row it was made over \(entity seq \d+, no longer in the store\)/,
      );
      editConfig();
      const next = await sync(db);
      expect(next.code).toBe(1);
      expect(next.stderr).toMatch(message);
      expect(next.stderr).toMatch(/the entity row it was made over .*the sync wrote nothing over it/);
      expect(next.stderr.trim().split("\n")).toHaveLength(1);
      expect(next.stderr).not.toContain(KEY);
      const after = await verify(db, KEY);
      expect(after.code).toBe(1);
      expect(after.stderr).toBe(before.stderr);
    });

    it("an entity head not signed: verify with the key says so, the next sync warns and signs it", async () => {
      const db = await keyedStore(engine);
      await tamper(db, "DELETE FROM meta WHERE key LIKE 'entity_chain:head_sign%'");
      expect((await verify(db, KEY)).stderr).toMatch(/entity chain head is not signed/);
      // No config edited since: no entity is due, and the sync still checks and signs the head.
      const next = await sync(db, "--json");
      expect(next.code, next.stderr).toBe(0);
      expect(JSON.parse(next.stdout).warningMessages).toContainEqual(
        expect.stringMatching(/^the entity chain head was not signed with FLAGTRAIL_SIGNING_KEY/),
      );
      const ok = await verify(db, KEY);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain("signature valid)");
    });

    it("a rotation: the entity head too is re-signed with the new key once the previous one is given", async () => {
      const db = await keyedStore(engine);
      const NEW = { FLAGTRAIL_SIGNING_KEY: "entity-sync-new-key" };
      // The entity part alone (the records' head is refused the same way: test/verify/keyRotation.test.ts).
      const refused = await syncWith(db, NEW, "--entities-only");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /entity chain head's HMAC-SHA256 signature does not match the entity row it was made over .*FLAGTRAIL_SIGNING_KEY_PREVIOUS/,
      );
      const rotated = await syncWith(db, { ...NEW, FLAGTRAIL_SIGNING_KEY_PREVIOUS: KEY }, "--json");
      expect(rotated.code, rotated.stderr).toBe(0);
      expect(JSON.parse(rotated.stdout).warningMessages ?? []).toEqual([]);
      const ok = await verify(db, NEW.FLAGTRAIL_SIGNING_KEY);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toContain("signature valid)");
      expect((await verify(db, KEY)).code).toBe(1);
    });
  });
}
