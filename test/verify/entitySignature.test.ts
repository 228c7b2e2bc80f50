// The entity chain's head signed with FLAGTRAIL_SIGNING_KEY, as the records' is: entity rows cut off the end
// with meta's mirror (entity_chain:head) rewritten to match are caught by verify with the key, and the next
// entity write refuses to link over them; a rotation goes through FLAGTRAIL_SIGNING_KEY_PREVIOUS; a store
// written without the key is unaffected until a keyed write, which warns and signs. On both engines, through
// the store's entity writers (the sync's write path; the CLI's sync: test/verify/syncOverTamper.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import { IntegrityError } from "../../src/errors.ts";
import { ENTITY_CHAIN_HEAD_KEY } from "../../src/store/entityChain.ts";
import { writeMetaValue } from "../../src/store/metaStore.ts";
import { queriesOf, sql } from "../../src/store/query.ts";
import { openStore, type Store } from "../../src/store/syncStore.ts";
import {
  storeConfigVersions,
  storeExperimentSnapshots,
  storeMetricSnapshots,
} from "../../src/sync/entityChanges.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { tempDbPath } from "../helpers/simSync.ts";
import { freshDatabase } from "../pg/cluster.ts";

const T0 = Date.UTC(2024, 5, 1);
const KEY = "entity-signing-key";
const OLD_KEY = "entity-old-key";
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** A write context with the key (warnings collected), or without one. */
function context(key?: string, previousKey?: string) {
  const warnings: string[] = [];
  const signing = key ? { key, previousKey, warn: (m: string) => warnings.push(m) } : undefined;
  return { ctx: { runId: null, now: T0, signing }, warnings };
}

const version = (n: number) => ({
  configId: "cfg",
  version: n,
  lastModifiedTime: T0 + n,
  lastModifierId: null,
  lastModifierName: null,
  raw: { id: "cfg", name: "limits", version: n, lastModifiedTime: T0 + n },
});

/** Five entity rows: config versions 1 and 2, an experiment, a metric, then config version 3 (the end). */
async function build(engine: "sqlite" | "pg", key?: string): Promise<Store> {
  const s = await openStore(
    engine === "pg" ? await freshDatabase("entsig") : tempDbPath("flagtrail-entsig-"),
  );
  const { ctx, warnings } = context(key);
  await storeConfigVersions(s, "limits", [version(1), version(2)], ctx);
  const experiment = {
    id: "e1",
    name: "Exp",
    status: "active",
    raw: { id: "e1", name: "Exp", status: "active" },
  };
  await storeExperimentSnapshots(s, "layer", [experiment], ctx);
  await storeMetricSnapshots(s, "purchase", [{ id: "m1", raw: { id: "m1" } }], ctx);
  await storeConfigVersions(s, "limits", [version(3)], ctx);
  expect(warnings).toEqual([]);
  return s;
}

/** As an attacker would: the last entity row deleted, meta's mirror rewritten to the row before it. */
async function cutTheEnd(s: Store): Promise<void> {
  const q = await queriesOf(s);
  await q.run(sql`DELETE FROM config_versions WHERE version = 3`);
  const [row] = await q.all<{ seq: number; hash: string }>(
    sql`SELECT entity_seq AS seq, entity_chain_hash AS hash FROM metric_snapshots`,
  );
  await writeMetaValue(s, ENTITY_CHAIN_HEAD_KEY, JSON.stringify({ seq: Number(row!.seq), hash: row!.hash }));
}

async function failure(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IntegrityError);
  return (error as Error).message;
}

const metaValues = async (s: Store) =>
  (await queriesOf(s)).all<{ key: string; value: string }>(
    sql`SELECT key, value FROM meta WHERE key LIKE 'entity_chain:%' ORDER BY key`,
  );

for (const engine of ["sqlite", "pg"] as const) {
  describe(`the entity chain's signed head, ${engine}`, () => {
    it("entity rows cut off the end with the mirror rewritten: caught by verify with the key, refused by the next write", async () => {
      store = await build(engine, KEY);
      expect((await verifyStore(store, { signingKey: KEY })).entities).toMatchObject({
        rows: 5,
        signature: "valid",
      });
      await cutTheEnd(store);
      // Without the key a shorter chain is valid; with it, the signed head is gone.
      expect((await verifyStore(store)).entities).toMatchObject({ rows: 4, signature: "not checked" });
      const verified = await failure(verifyStore(store, { signingKey: KEY }));
      expect(verified).toMatch(
        /^the entity chain head's HMAC-SHA256 signature does not match the entity row it was made over \(entity seq 5, no longer in the store\): entity rows were removed from or changed at the end/,
      );
      const { ctx } = context(KEY);
      const refused = await failure(storeConfigVersions(store, "limits", [version(4)], ctx));
      expect(refused).toMatch(
        /^the entity chain head's HMAC-SHA256 signature does not match the entity row it was made over \(entity seq 5, /,
      );
      // Nothing was written over it: verify names the same break.
      expect((await verifyStore(store)).entities.rows).toBe(4);
      expect(await failure(verifyStore(store, { signingKey: KEY }))).toBe(verified);
    });

    it("a rotation: refused with the new key alone, re-signed with the previous key given", async () => {
      store = await build(engine, OLD_KEY);
      const alone = context(KEY);
      expect(await failure(storeMetricSnapshots(store, "purchase", [], alone.ctx))).toMatch(
        /does not match the entity row it was made over \(entity seq 5, [0-9a-f]{12}…\).*give the old key to the next sync as FLAGTRAIL_SIGNING_KEY_PREVIOUS/,
      );
      const rotation = context(KEY, OLD_KEY);
      await storeMetricSnapshots(store, "purchase", [{ id: "m1", raw: { id: "m1", v: 2 } }], rotation.ctx);
      expect(rotation.warnings).toEqual([]);
      expect((await verifyStore(store, { signingKey: KEY })).entities).toMatchObject({ rows: 6 });
      expect(await failure(verifyStore(store, { signingKey: OLD_KEY }))).toMatch(
        /does not match the entity row it was made over \(entity seq 6, [0-9a-f]{12}…\)/,
      );
      // The old key left set: named, so that it is removed.
      const after = context(KEY, OLD_KEY);
      await storeMetricSnapshots(store, "purchase", [], after.ctx);
      expect(after.warnings).toEqual([
        expect.stringMatching(
          /^FLAGTRAIL_SIGNING_KEY_PREVIOUS is set but the entity chain head is already signed with FLAGTRAIL_SIGNING_KEY/,
        ),
      ]);
    });

    it("a store written without the key is unaffected; a keyed write warns and signs its head", async () => {
      store = await build(engine);
      expect((await metaValues(store)).map((m) => m.key)).toEqual([ENTITY_CHAIN_HEAD_KEY]);
      expect((await verifyStore(store)).entities).toMatchObject({ rows: 5, signature: "not checked" });
      expect(await failure(verifyStore(store, { signingKey: KEY }))).toMatch(
        /^the entity chain head is not signed \(meta entity_chain:head_signature is missing\)/,
      );
      const keyed = context(KEY);
      await storeMetricSnapshots(store, "purchase", [], keyed.ctx);
      expect(keyed.warnings).toEqual([
        expect.stringMatching(
          /^the entity chain head was not signed with FLAGTRAIL_SIGNING_KEY .*this sync signs it from entity seq 5 on/,
        ),
      ]);
      expect((await metaValues(store)).map((m) => m.key)).toEqual([
        ENTITY_CHAIN_HEAD_KEY,
        "entity_chain:head_signature",
        "entity_chain:head_signed_seq",
      ]);
      expect((await verifyStore(store, { signingKey: KEY })).entities.signature).toBe("valid");
      // A write without the key moves the head on past the signed one: the next keyed write accepts it
      // (the signature still matches the row it was made over) and signs the new head, silently.
      await storeConfigVersions(store, "limits", [version(4)], context().ctx);
      expect(await failure(verifyStore(store, { signingKey: KEY }))).toMatch(
        /^the entity chain head is signed at entity seq 5, not at the last entity row \(entity seq 6\): the entity rows after it were stored by a sync without FLAGTRAIL_SIGNING_KEY/,
      );
      const next = context(KEY);
      await storeMetricSnapshots(store, "purchase", [], next.ctx);
      expect(next.warnings).toEqual([]);
      expect((await verifyStore(store, { signingKey: KEY })).entities).toMatchObject({ rows: 6 });
    });

    it("a signature left over an entity chain whose rows were all removed is refused", async () => {
      store = await build(engine, KEY);
      const q = await queriesOf(store);
      for (const table of ["config_versions", "experiment_snapshots", "metric_snapshots"])
        await q.run(sql`DELETE FROM ${sql.raw(table)}`);
      await q.run(sql`DELETE FROM meta WHERE key = ${ENTITY_CHAIN_HEAD_KEY}`);
      expect(await failure(verifyStore(store, { signingKey: KEY }))).toMatch(
        /^meta holds a signed entity chain head but the store has no entity rows: they were removed/,
      );
      expect(await failure(storeMetricSnapshots(store, "purchase", [], context(KEY).ctx))).toMatch(
        /signed entity chain head but the store has no entity rows/,
      );
    });
  });
}
