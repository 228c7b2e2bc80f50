// Tampering that verify catches must still be caught after the next sync: a sync that rewrote the
// coverage digest from every row, or relinked records and entity rows from the last row stored and
// re-signed the head, covered an edited coverage row or rows cut off the end, and verify passed.
// Tampering goes straight through the database, as an attacker's would; the syncs and verifies are the
// real CLI against the simulator, on SQLite and PostgreSQL.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordHash } from "../../src/hash.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "../pg/cluster.ts";

const KEY = "sync-over-tamper-key";
let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startTestSimulator({ records: 300, days: 20, timeZone: "UTC" });
});
afterAll(async () => {
  await sim?.close();
});

type Result = { code: number | null; stdout: string; stderr: string };

function sync(db: string, key?: string, ...extra: string[]): Promise<Result> {
  const env = simEnv(sim, db, key ? { FLAGTRAIL_SIGNING_KEY: key } : {});
  return runCliInProcess(["sync", "--since", daysAgo(22), "--quiet", ...extra], { env });
}

function verify(db: string, key?: string): Promise<Result> {
  return runCliInProcess(["verify", "--db", db], { env: key ? { FLAGTRAIL_SIGNING_KEY: key } : {} });
}

/** Runs `statements` on the store as an attacker would: straight through the database. */
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

async function read<T>(db: string, statement: string): Promise<T[]> {
  if (db.startsWith("postgres")) return (await queryOnce(db, statement)) as T[];
  const reader = new Database(db, { readonly: true });
  try {
    return reader.prepare(statement).all() as T[];
  } finally {
    reader.close();
  }
}

async function store(engine: "sqlite" | "pg", key?: string, ...extra: string[]): Promise<string> {
  const db = engine === "pg" ? await freshDatabase("tamper") : tempDbPath("flagtrail-tamper-");
  const first = await sync(db, key, ...extra);
  expect(first.code, first.stderr).toBe(0);
  const ok = await verify(db, key);
  expect(ok.code, ok.stderr).toBe(0);
  return db;
}

/** A config edit on the server: its new version and its audit record (the next sync links both). */
function editConfig(): void {
  const name = sim.entities.configNames()[1]!;
  const actor = { id: "actorActorActor00001", name: "Dana", email: "dana@example.com" };
  const at = sim.control.now();
  sim.entities.plantVersion(name, { defaultValue: { limit: 777 + at } }, actor, at);
  sim.control.append([{ at, name, actionType: "config_default_value_update", changeLog: "Updated", actor }]);
}

/**
 * New records on the server (and a config edit), then the sync after the tampering: it refuses with one
 * sentence naming the break, and verify still fails.
 */
async function expectCaught(db: string, key: string | undefined, message: RegExp, ...extra: string[]) {
  const before = await verify(db, key);
  expect(before.code).toBe(1);
  expect(before.stderr).toMatch(message);
  sim.control.insertAtHead(4);
  editConfig();
  const next = await sync(db, key, ...extra);
  expect(next.stderr).toMatch(message);
  expect(next.stderr).toMatch(/the sync wrote nothing over it/);
  expect(next.stderr.trim().split("\n")).toHaveLength(1);
  expect(next.code).toBe(1);
  const after = await verify(db, key);
  expect(after.code).toBe(1);
  expect(after.stderr).toMatch(message);
}

const LAST_ROWS = "seq > (SELECT max(seq) - 5 FROM audit_logs)";
/** The newest 5 records, and the rows that reference them first (foreign keys). */
const CUT = [
  ...["rule_changes", "rule_diff_summaries", "listed_days", "audit_log_revisions", "config_edit_links"].map(
    (t) => `DELETE FROM ${t} WHERE audit_log_id IN (SELECT id FROM audit_logs WHERE ${LAST_ROWS})`,
  ),
  `DELETE FROM audit_logs WHERE ${LAST_ROWS}`,
];
const META_HEAD_TO_MATCH = [
  "UPDATE meta SET value = (SELECT chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1) WHERE key = 'chain_head_hash'",
  "UPDATE meta SET value = (SELECT CAST(max(seq) AS TEXT) FROM audit_logs) WHERE key = 'chain_head_seq'",
];

for (const engine of ["sqlite", "pg"] as const) {
  describe(`the next sync over tampering, ${engine}`, () => {
    it("an edited coverage row of a day the sync does not check again stays caught", async () => {
      const db = await store(engine, undefined, "--no-entities");
      const [row] = await read<{ day: string }>(
        db,
        "SELECT day FROM coverage WHERE server_total > 0 ORDER BY day LIMIT 1",
      );
      // A gap made to look reconciled: the server's count lowered to what the store holds.
      await tamper(db, `UPDATE coverage SET server_total = 0 WHERE day = '${row!.day}'`);
      await expectCaught(db, undefined, /coverage table's rows differ from its digest/, "--no-entities");
      const [kept] = await read<{ server_total: number }>(
        db,
        `SELECT server_total FROM coverage WHERE day = '${row!.day}'`,
      );
      expect(Number(kept!.server_total)).toBe(0);
    });

    it("records cut off the end, meta left as it was, stay caught without a key", async () => {
      const db = await store(engine, undefined, "--no-entities");
      await tamper(db, ...CUT);
      await expectCaught(
        db,
        undefined,
        /chain head recorded in meta .* is not the last stored record/,
        "--no-entities",
      );
    });

    it("records cut off the end with meta's head rewritten to match stay caught with the key", async () => {
      const db = await store(engine, KEY, "--no-entities");
      const [signed] = await read<{ seq: number }>(db, "SELECT max(seq) AS seq FROM audit_logs");
      await tamper(db, ...CUT, ...META_HEAD_TO_MATCH);
      // verify and the refused sync name the same record: the one the signature was made over.
      const sentence = new RegExp(
        `^flagtrail: The chain head's HMAC-SHA256 signature does not match the record it was made over \\(seq ${Number(signed!.seq)}, no longer in the store\\)`,
      );
      await expectCaught(db, KEY, sentence, "--no-entities");
    });

    it("records cut off the end with meta's head rewritten, their rule diffs left behind, are caught without a key", async () => {
      const db = await store(engine, undefined, "--no-entities");
      // From the newest record with a rule diff on: its summary and rule_changes rows stay.
      const [diffed] = await read<{ seq: number }>(
        db,
        "SELECT max(a.seq) AS seq FROM audit_logs a JOIN rule_diff_summaries s ON s.audit_log_id = a.id",
      );
      const from = `seq >= ${Number(diffed!.seq)}`;
      const cut = [
        ...["listed_days", "audit_log_revisions", "config_edit_links"].map(
          (t) => `DELETE FROM ${t} WHERE audit_log_id IN (SELECT id FROM audit_logs WHERE ${from})`,
        ),
        `DELETE FROM audit_logs WHERE ${from}`,
      ];
      // The attacker turns the foreign keys off for the session (the sqlite3 shell has them off).
      await tamper(
        db,
        ...(engine === "pg"
          ? [`SET session_replication_role = replica; ${cut.join("; ")}`]
          : ["PRAGMA foreign_keys = OFF", ...cut]),
        ...META_HEAD_TO_MATCH,
      );
      const [orphaned] = await read<{ id: string }>(
        db,
        "SELECT min(audit_log_id) AS id FROM rule_diff_summaries s WHERE NOT EXISTS (SELECT 1 FROM audit_logs a WHERE a.id = s.audit_log_id)",
      );
      const sentence = new RegExp(
        `^flagtrail: The rule_diff_summaries table holds \\d+ rows? of records not in audit_logs \\(the first of audit_log_id ${orphaned!.id}\\): records were removed, their rule diffs left behind`,
      );
      await expectCaught(db, undefined, sentence, "--no-entities");
    });

    it("a quarantine row added stays caught (new rows are folded into the digest from its last id on)", async () => {
      const db = await store(engine, undefined, "--no-entities");
      const raw = JSON.stringify({ id: "planted", date: "not a date" });
      await tamper(
        db,
        `INSERT INTO quarantine (raw, raw_hash, issues, received_at) VALUES ('${raw}', '${recordHash(JSON.parse(raw))}', '[]', 0)`,
      );
      await expectCaught(
        db,
        undefined,
        /The quarantine table holds rows above id 0, the last one its digest/,
        "--no-entities",
      );
    });

    it("with the key, a digest removed with an edit stays caught", async () => {
      const db = await store(engine, KEY, "--no-entities");
      await tamper(
        db,
        "UPDATE coverage SET server_total = 0",
        "DELETE FROM meta WHERE key = 'chain:coverage'",
      );
      await expectCaught(db, KEY, /digest in meta chain:coverage .*is missing/, "--no-entities");
    });

    it("what the next sync cannot tell from a store never written so: it says so, and covers it", async () => {
      // Without the key: records cut off the end with meta's head rewritten are a valid shorter chain.
      const plain = await store(engine, undefined, "--no-entities");
      await tamper(plain, ...CUT, ...META_HEAD_TO_MATCH);
      expect((await verify(plain)).code).toBe(0);
      // With it, the signature removed too: verify with the key catches it until the next keyed sync,
      // which signs the head it finds (a store last written without the key looks the same) and warns.
      const keyed = await store(engine, KEY, "--no-entities");
      await tamper(
        keyed,
        ...CUT,
        ...META_HEAD_TO_MATCH,
        "DELETE FROM meta WHERE key LIKE 'chain:head_sign%'",
      );
      expect((await verify(keyed, KEY)).stderr).toMatch(/chain head is not signed/);
      sim.control.insertAtHead(2);
      const next = await sync(keyed, KEY, "--no-entities");
      expect(next.code, next.stderr).toBe(0);
      expect(next.stdout).toMatch(
        /warning: the chain head was not signed with FLAGTRAIL_SIGNING_KEY .* this sync signs it from seq \d+ on; if it was signed before, the signature was removed/,
      );
      expect((await verify(keyed, KEY)).code).toBe(0);
    });

    it("a sync without the key in between leaves the head signed at an earlier seq: the keyed sync accepts it", async () => {
      const db = await store(engine, KEY, "--no-entities");
      sim.control.insertAtHead(2);
      expect((await sync(db, undefined, "--no-entities")).code).toBe(0);
      expect((await verify(db, KEY)).stderr).toMatch(
        /The chain head is signed at seq \d+, not at the last record \(seq \d+\): the records after it were stored by a sync without/,
      );
      sim.control.insertAtHead(2);
      const keyed = await sync(db, KEY, "--no-entities");
      expect(keyed.code, keyed.stderr).toBe(0);
      expect(keyed.stdout).not.toMatch(/warning:/);
      expect((await verify(db, KEY)).code).toBe(0);
    });

    it("entity rows cut off the end stay caught", async () => {
      const db = await store(engine);
      const tables = [
        "config_versions",
        "config_version_revisions",
        "experiment_snapshots",
        "metric_snapshots",
      ];
      const [last] = await read<{ seq: number }>(
        db,
        `SELECT max(entity_seq) AS seq FROM (${tables.map((t) => `SELECT entity_seq FROM ${t}`).join(" UNION ALL ")}) u`,
      );
      expect(Number(last!.seq)).toBeGreaterThan(1);
      await tamper(db, ...tables.map((t) => `DELETE FROM ${t} WHERE entity_seq = ${Number(last!.seq)}`));
      await expectCaught(db, undefined, /entity chain head recorded in meta .* is not its last row/);
    });
  });
}
