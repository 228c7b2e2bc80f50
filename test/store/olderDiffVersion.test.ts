// A binary with an older diff version writing into a store a newer one has marked, on both engines. Config
// diffs: the store's config_diff_version goes down to the writer's with its rows (a newer binary then derives
// every config again, theirs included, instead of keeping rows of the old algorithm under its own number).
// Rule diffs need no such step: each summary row carries its version and the backfill mark is read only at
// its own version, so the sync leaves the newer mark where it was (short of the older rows, which the newer
// backfill re-diffs) and the older binary's backfill puts the mark at its own version.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CONFIG_DIFF_VERSION } from "../../src/diff/configHistory.ts";
import { DIFF_VERSION } from "../../src/diff/rules.ts";
import { prepareRecords } from "../../src/records/prepare.ts";
import { readMetaValue, writeMetaValue } from "../../src/store/metaValues.ts";
import { queriesOf, sql } from "../../src/store/query.ts";
import { BACKFILL_MARK_KEY, backfillRuleDiffs } from "../../src/store/ruleDiffs.ts";
import {
  commitSyncBatch,
  openStore,
  type RunCounters,
  rediffConfigsBehind,
  type Store,
  type VersionInput,
} from "../../src/store/syncStore.ts";
import { storeConfigVersions } from "../../src/sync/entityChanges.ts";
import { makeRecord } from "../helpers/auditRecords.ts";
import { freshDatabase } from "../pg/cluster.ts";

const AT = Date.UTC(2025, 4, 6, 10, 0, 0);
const ENGINES = {
  sqlite: async () => join(mkdtempSync(join(tmpdir(), "flagtrail-diffversion-")), "store.db"),
  postgres: () => freshDatabase("diffversion"),
};

const opened: Store[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
});

function version(n: number): VersionInput {
  const raw = { id: "cfg_1", name: "limits", version: n, defaultValue: { limit: n }, isEnabled: n > 1 };
  return {
    configId: "cfg_1",
    version: n,
    lastModifiedTime: AT + n,
    lastModifierId: null,
    lastModifierName: null,
    raw,
  };
}

const zero: RunCounters = {
  ...{ fetched: 0, inserted: 0, duplicates: 0, mutations: 0, quarantined: 0, warnings: 0 },
  ...{ requests: 0, throttled: 0, retries: 0 },
};

/** One page of `records` committed as a sync batch. */
async function syncPage(store: Store, records: unknown[]) {
  await commitSyncBatch(store, {
    plan: null,
    runId: 1,
    pages: [
      { prepared: prepareRecords(records), requestPath: "/audit_logs", dayRange: { from: "", to: "" } },
    ],
    counters: zero,
    now: AT,
  });
}

const rules = (percent: number) => ({
  rules: {
    old: [{ id: "r1", groupName: "Everyone", percentagePass: 10, conditionJSON: [] }],
    new: [{ id: "r1", groupName: "Everyone", percentagePass: percent, conditionJSON: [] }],
  },
});

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])("an older diff version (%s)", (engine) => {
  it("config diffs: rows written under a newer number set it down to the writer's, in their write", async () => {
    const store = await openStore(await ENGINES[engine]());
    opened.push(store);
    const newer = String(CONFIG_DIFF_VERSION + 1);
    await writeMetaValue(store, "config_diff_version", newer);
    const context = { runId: null, now: AT };
    await storeConfigVersions(store, "limits", [version(2), version(1)], context);
    const q = await queriesOf(store);
    const changes = await q.get<{ n: number }>(sql`SELECT count(*) AS n FROM config_version_changes`);
    expect(Number(changes?.n)).toBeGreaterThan(0);
    expect(await readMetaValue(store, "config_diff_version")).toBe(String(CONFIG_DIFF_VERSION));
    // A read that adds no version writes links only (not the diff's rows): a newer number stays.
    await writeMetaValue(store, "config_diff_version", newer);
    await storeConfigVersions(store, "limits", [version(2), version(1)], context);
    expect(await readMetaValue(store, "config_diff_version")).toBe(newer);
    // This binary has nothing to derive again under a newer number, nor under its own.
    expect(await rediffConfigsBehind(store)).toBe(0);
    await storeConfigVersions(store, "limits", [version(3)], context);
    expect(await readMetaValue(store, "config_diff_version")).toBe(String(CONFIG_DIFF_VERSION));
    expect(await rediffConfigsBehind(store)).toBe(0);
  });

  it("config diffs: a write that fails keeps the newer number (one transaction with the rows)", async () => {
    const store = await openStore(await ENGINES[engine]());
    opened.push(store);
    const newer = String(CONFIG_DIFF_VERSION + 1);
    await writeMetaValue(store, "config_diff_version", newer);
    // The read's invalid item fails to serialize (a BigInt) after the rows and the number are written.
    const read = {
      ...{ kind: "config_versions", key: "limits", outcome: "ok" as const, items: 2, invalid: 1 },
      ...{ invalidItems: [{ raw: { id: 1n }, issues: [] }], requestPath: "/console/v1/x" },
    };
    await expect(
      storeConfigVersions(store, "limits", [version(2), version(1)], { runId: null, now: AT, read }),
    ).rejects.toThrow(/serialize a BigInt/);
    const q = await queriesOf(store);
    const rows = await q.get<{ n: number }>(sql`SELECT count(*) AS n FROM config_version_changes`);
    expect(Number(rows?.n)).toBe(0);
    expect(await readMetaValue(store, "config_diff_version")).toBe(newer);
  });

  it("rule diffs: rows carry the writer's version; the newer mark stays short of them, the older backfill lowers it", async () => {
    const store = await openStore(await ENGINES[engine]());
    opened.push(store);
    const first = makeRecord(AT, { changes: rules(50) });
    const second = makeRecord(AT + 1000, { changes: rules(75) });
    await syncPage(store, [first]);
    const q = await queriesOf(store);
    // As a newer binary leaves the store: its summaries and its mark at the head.
    const newer = DIFF_VERSION + 1;
    await q.run(sql`UPDATE rule_diff_summaries SET diff_version = ${newer}`);
    const newerMark = JSON.stringify({ diffVersion: newer, seq: 1 });
    await writeMetaValue(store, BACKFILL_MARK_KEY, newerMark);
    await syncPage(store, [second]);
    const summaries = () =>
      q.all<{ seq: number; diff_version: number }>(
        sql`SELECT a.seq, s.diff_version FROM rule_diff_summaries s JOIN audit_logs a ON a.id = s.audit_log_id
            ORDER BY a.seq`,
      );
    expect(await summaries()).toEqual([
      { seq: 1, diff_version: newer },
      { seq: 2, diff_version: DIFF_VERSION },
    ]);
    // The newer binary's backfill starts after seq 1 and re-diffs seq 2 (its version is lower).
    expect(await readMetaValue(store, BACKFILL_MARK_KEY)).toBe(newerMark);
    expect(await backfillRuleDiffs(store)).toEqual({ diffed: 0, scanned: 2 });
    expect(JSON.parse((await readMetaValue(store, BACKFILL_MARK_KEY)) ?? "null")).toEqual({
      diffVersion: DIFF_VERSION,
      seq: 2,
    });
    expect(await summaries()).toEqual([
      { seq: 1, diff_version: newer },
      { seq: 2, diff_version: DIFF_VERSION },
    ]);
  });
});
