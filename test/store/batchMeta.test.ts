// A sync batch reads meta's chain keys once at its start and writes every meta value it moves (head
// mirror, rule-diff mark, signature, digests) in one multi-row upsert (src/store/syncBatch.ts), on both
// engines: what each batch leaves in meta, and `verify` after each, for quarantined records fresh and
// seen again, a store an older flagtrail wrote (no digests, no signature: the upsert's every key at once,
// which PostgreSQL refuses if one came twice), a rule-diff mark behind, and a signing key's rotation.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DIFF_VERSION } from "../../src/diff/rules.ts";
import { IntegrityError } from "../../src/errors.ts";
import { prepareRecords } from "../../src/records/prepare.ts";
import { readMetaValue, writeMetaValue } from "../../src/store/metaValues.ts";
import { queriesOf, sql } from "../../src/store/query.ts";
import { BACKFILL_MARK_KEY } from "../../src/store/ruleDiffs.ts";
import { commitSyncBatch, openStore, type RunCounters, type Store } from "../../src/store/syncStore.ts";
import { verifyStore } from "../../src/verify/store.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { freshDatabase } from "../pg/cluster.ts";

const AT = Date.UTC(2025, 2, 3, 10, 0, 0);
const ENGINES = {
  sqlite: async () => join(mkdtempSync(join(tmpdir(), "flagtrail-batchmeta-")), "store.db"),
  postgres: () => freshDatabase("batchmeta"),
};
const KEY = "batch-meta-key";
const NEW_KEY = "batch-meta-key-2";

const opened: Store[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
});

async function storeOn(engine: keyof typeof ENGINES): Promise<Store> {
  const store = await openStore(await ENGINES[engine]());
  opened.push(store);
  return store;
}

const zero: RunCounters = {
  ...{ fetched: 0, inserted: 0, duplicates: 0, mutations: 0, quarantined: 0, warnings: 0 },
  ...{ requests: 0, throttled: 0, retries: 0 },
};

let minutes = 0;
const nextAt = () => {
  minutes += 1;
  return AT + minutes * 60_000;
};
const valid = (n: number) => Array.from({ length: n }, () => makeRecord(nextAt()));
/** Fails validation (no name), so it goes to quarantine; the same object again is the same raw row. */
const invalid = () => ({ ...makeRecord(nextAt()), name: undefined });

const ANY_DAY = { from: "", to: "" };

/** One page of `records` (read for `dayRange`) committed as one sync batch; its warnings. */
async function batch(
  store: Store,
  records: unknown[],
  keys: { key?: string; previous?: string } = {},
  dayRange = ANY_DAY,
) {
  const result = await commitSyncBatch(store, {
    plan: null,
    runId: 1,
    pages: [{ prepared: prepareRecords(records), requestPath: "/audit_logs", dayRange }],
    counters: zero,
    now: AT,
    signingKey: keys.key,
    previousSigningKey: keys.previous,
  });
  return result.warningMessages;
}

/** The chain keys of meta as stored (digests parsed). */
async function chainMeta(store: Store) {
  const value = (key: string) => readMetaValue(store, key);
  const parsed = async (key: string) => {
    const text = await value(key);
    return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
  };
  return {
    head: Number(await value("chain_head_seq")),
    signedSeq: await value("chain:head_signed_seq"),
    signature: await value("chain:head_signature"),
    quarantine: await value("chain:quarantine"),
    quarantineRows: (await parsed("chain:quarantine"))?.rows,
    coverageRows: (await parsed("chain:coverage"))?.rows,
    mark: (await parsed(BACKFILL_MARK_KEY))?.seq,
  };
}

/** verify's counts, with the key (null: without one). */
async function verified(store: Store, key: string | null = KEY) {
  const check = await verifyStore(store, key === null ? {} : { signingKey: key });
  return { records: check.records, quarantine: check.quarantine, signature: check.signature };
}

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])("a sync batch's meta (%s)", (engine) => {
  it("moves each key it must, once, and verify passes after each batch", async () => {
    const store = await storeOn(engine);
    const bad = invalid();
    // The first batch: every key from nothing (both digests, head, mark, signature).
    expect(await batch(store, [...valid(3), bad], { key: KEY })).toEqual([]);
    const first = await chainMeta(store);
    expect(first).toMatchObject({ head: 3, signedSeq: "3", quarantineRows: 1, coverageRows: 0, mark: 3 });
    expect(await verified(store)).toEqual({
      records: 3,
      quarantine: { rows: 1, digest: "matched" },
      signature: "valid",
    });
    // The quarantined record seen again adds no row: its digest is left as it was; the rest moves.
    expect(await batch(store, [bad, ...valid(2)], { key: KEY })).toEqual([]);
    const second = await chainMeta(store);
    expect(second).toMatchObject({ head: 5, signedSeq: "5", quarantine: first.quarantine, mark: 5 });
    expect(second.signature).not.toBe(first.signature);
    expect(await verified(store)).toMatchObject({ records: 5, quarantine: { rows: 1, digest: "matched" } });
    // A fresh quarantined record alone: the digest folds it in, the head stays.
    expect(await batch(store, [bad, invalid()], { key: KEY })).toEqual([]);
    const third = await chainMeta(store);
    expect(third).toMatchObject({ head: 5, signedSeq: "5", quarantineRows: 2, mark: 5 });
    expect(await verified(store)).toMatchObject({ records: 5, quarantine: { rows: 2, digest: "matched" } });
    // The next batch builds on it (a digest left behind its rows would be refused here).
    expect(await batch(store, [invalid(), ...valid(1)], { key: KEY })).toEqual([]);
    expect(await chainMeta(store)).toMatchObject({ head: 6, quarantineRows: 3, mark: 6 });
    expect(await verified(store)).toMatchObject({ records: 6, quarantine: { rows: 3, digest: "matched" } });
  });

  it("narrows a quarantined record's day range seen again without moving its digest", async () => {
    const store = await storeOn(engine);
    // No readable date: its day is known only as the range of the requests that returned it.
    const undated = { ...makeRecord(nextAt()), date: "", actionType: 7 };
    await batch(store, [undated, ...valid(1)], { key: KEY }, { from: "2025-03-01", to: "2025-03-20" });
    const before = await chainMeta(store);
    await batch(store, [undated], { key: KEY }, { from: "2025-03-02", to: "2025-03-05" });
    const q = await queriesOf(store);
    expect(await q.all(sql`SELECT day_min, day_max FROM quarantine`)).toEqual([
      { day_min: "2025-03-02", day_max: "2025-03-05" },
    ]);
    expect((await chainMeta(store)).quarantine).toBe(before.quarantine);
    expect(await verified(store)).toMatchObject({ records: 1, quarantine: { rows: 1, digest: "matched" } });
  });

  it("writes a store an older flagtrail wrote every key in one statement, then verifies", async () => {
    const store = await storeOn(engine);
    const bad = invalid();
    await batch(store, [...valid(2), bad]);
    // As written before the digests, the signature and the rule-diff mark existed.
    const q = await queriesOf(store);
    await q.run(sql`DELETE FROM meta WHERE key LIKE 'chain:%' OR key = ${BACKFILL_MARK_KEY}`);
    // Quarantine seen again only: still the digest is written, from every row present.
    const warnings = await batch(store, [bad, ...valid(1)], { key: KEY });
    expect(warnings.join("\n")).toMatch(/quarantine and coverage digests were not in meta/);
    expect(warnings.join("\n")).toMatch(/was not signed with FLAGTRAIL_SIGNING_KEY/);
    // The mark was behind (none): it stays for the backfill, not moved past records never diffed.
    expect(await chainMeta(store)).toMatchObject({
      head: 3,
      signedSeq: "3",
      quarantineRows: 1,
      coverageRows: 0,
      mark: undefined,
    });
    expect(await verified(store)).toMatchObject({ records: 3, quarantine: { rows: 1, digest: "matched" } });
    expect(await batch(store, valid(1), { key: KEY })).toEqual([]);
    expect(await verified(store)).toMatchObject({ records: 4, signature: "valid" });
  });

  it("leaves a rule-diff mark behind the head where it is, and moves one at the head", async () => {
    const store = await storeOn(engine);
    await batch(store, valid(4));
    expect((await chainMeta(store)).mark).toBe(4);
    await writeMetaValue(store, BACKFILL_MARK_KEY, JSON.stringify({ diffVersion: DIFF_VERSION, seq: 2 }));
    await batch(store, valid(2));
    expect((await chainMeta(store)).mark).toBe(2);
    await writeMetaValue(store, BACKFILL_MARK_KEY, JSON.stringify({ diffVersion: DIFF_VERSION, seq: 6 }));
    await batch(store, valid(1));
    expect(await chainMeta(store)).toMatchObject({ head: 7, mark: 7 });
    expect(await verified(store, null)).toMatchObject({ records: 7, signature: "not checked" });
  });

  it("signs with the new key on a rotation, and verify then takes only the new key", async () => {
    const store = await storeOn(engine);
    await batch(store, valid(2), { key: KEY });
    // Without the previous key the head's signature is refused, nothing written.
    await expect(batch(store, valid(1), { key: NEW_KEY })).rejects.toThrow(IntegrityError);
    expect((await chainMeta(store)).head).toBe(2);
    expect(await batch(store, [invalid(), ...valid(1)], { key: NEW_KEY, previous: KEY })).toEqual([]);
    expect(await verified(store, NEW_KEY)).toMatchObject({ records: 3, signature: "valid" });
    await expect(verifyStore(store, { signingKey: KEY })).rejects.toThrow(IntegrityError);
    // The old key left set: said, and the head signed with the new one still.
    const left = await batch(store, [], { key: NEW_KEY, previous: KEY });
    expect(left.join("\n")).toMatch(/FLAGTRAIL_SIGNING_KEY_PREVIOUS is set/);
    expect(await verified(store, NEW_KEY)).toMatchObject({ records: 3, quarantine: { rows: 1 } });
  });
});
