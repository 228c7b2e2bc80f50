// A sync batch builds on meta as it read it at its start (src/store/syncBatch.ts): on PostgreSQL (READ
// COMMITTED) other writers may commit meanwhile. Here the batch is held inside its transaction (a trigger
// waiting for an advisory lock the test holds) after it quarantined a record, while a coverage range and an
// entity read's invalid item commit: the batch must neither put back the coverage digest it saw nor leave
// its own quarantine row out of the digest (the entity write's, stored meanwhile, starts after that row).
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { prepareRecords } from "../../src/records/prepare.ts";
import {
  commitSyncBatch,
  openStore,
  type RunCounters,
  recordCoverage,
  type Store,
} from "../../src/store/syncStore.ts";
import { storeExperimentSnapshots } from "../../src/sync/entityChanges.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const AT = Date.UTC(2025, 2, 3, 10, 0, 0);
const KEY = "concurrent-batch-key";
const HOLD = 7311;
const zero: RunCounters = {
  ...{ fetched: 0, inserted: 0, duplicates: 0, mutations: 0, quarantined: 0, warnings: 0 },
  ...{ requests: 0, throttled: 0, retries: 0 },
};

let store: Store | undefined;
const clients: pg.Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.end();
  await store?.close();
  store = undefined;
});

const batch = (s: Store, records: unknown[]) =>
  commitSyncBatch(s, {
    plan: null,
    runId: 1,
    pages: [
      { prepared: prepareRecords(records), requestPath: "/audit_logs", dayRange: { from: "", to: "" } },
    ],
    counters: zero,
    now: AT,
    signingKey: KEY,
  });

/** Inserting record `id` waits for the advisory lock HOLD, which the returned client holds. */
async function holdInsertOf(url: string, id: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  await client.query(`CREATE FUNCTION test_hold_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.id = '${id}' THEN PERFORM pg_advisory_xact_lock_shared(${HOLD}); END IF;
      RETURN NEW;
    END $$`);
  await client.query(
    "CREATE TRIGGER test_hold_insert BEFORE INSERT ON audit_logs FOR EACH ROW EXECUTE FUNCTION test_hold_insert()",
  );
  await client.query("SELECT pg_advisory_lock($1)", [HOLD]);
  return client;
}

async function waitingOnHold(url: string): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 20) {
    const [row] = await queryOnce<{ n: number }>(
      url,
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [HOLD],
    );
    if (row?.n === 1) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the batch never waited on the held insert");
}

describe("a PostgreSQL sync batch while other writers commit", () => {
  it("keeps their coverage digest and folds its quarantine row in with theirs", async () => {
    const url = await freshDatabase("batchconc");
    const s = await openStore(url);
    store = s;
    await batch(s, [makeRecord(AT), { ...makeRecord(AT + 1000), name: undefined }]);
    const held = makeRecord(AT + 2000);
    const holder = await holdInsertOf(url, held.id);
    // Quarantines its record (row 2), then waits inserting `held`.
    const second = batch(s, [{ ...makeRecord(AT + 3000), name: undefined }, held]);
    await waitingOnHold(url);
    const day = { day: "2025-03-03", serverTotal: 3, localCount: 3, quarantinedCount: 1, dayClosed: true };
    await recordCoverage(s, "all", [day], 1, AT);
    const read = {
      ...{ kind: "layer_experiments", key: "layer1", outcome: "ok" as const, items: 1, invalid: 1 },
      ...{ invalidItems: [{ raw: { id: "bad" }, issues: [] } as never], requestPath: "/layers/layer1" },
    };
    const item = { id: "x", name: "x", status: "active", raw: { id: "x", name: "x", status: "active" } };
    // With the key, as the sync's entity part writes (it signs the entity chain's head).
    const signing = { key: KEY, warn: () => {} };
    await storeExperimentSnapshots(s, "layer1", [item], { runId: null, now: AT, read, signing });
    await holder.query("SELECT pg_advisory_unlock($1)", [HOLD]);
    await second;
    expect(await queryOnce(url, "SELECT id FROM quarantine ORDER BY id")).toEqual([
      { id: 1 },
      { id: 2 },
      { id: 3 },
    ]);
    const check = await verifyStore(s, { signingKey: KEY });
    expect(check).toMatchObject({
      records: 2,
      quarantine: { rows: 3, digest: "matched" },
      coverage: { rows: 1, digest: "matched" },
      signature: "valid",
    });
    // And the next batch builds on it.
    await batch(s, [{ ...makeRecord(AT + 4000), name: undefined }]);
    expect((await verifyStore(s, { signingKey: KEY })).quarantine).toEqual({ rows: 4, digest: "matched" });
  });
});
