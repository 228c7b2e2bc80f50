// The entity history tables: versions append-only with revisions for changed content, snapshots only on
// change, every content row linked in the entity chain, and what a sync has to read next.
import { afterEach, describe, expect, it } from "vitest";
import { CHAIN_GENESIS, chainLink, recordHash } from "../../src/hash.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { ENTITY_CHAIN_HEAD_KEY, type EntityChainRow, readEntityChain } from "../../src/store/entityChain.ts";
import { configsDueForVersions } from "../../src/store/entityQueries.ts";
import { recordEntityFetch } from "../../src/store/entityWrites.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import {
  storeConfigVersions,
  storeExperimentSnapshots,
  storeMetricSnapshots,
} from "../../src/sync/entityChanges.ts";
import { eventsDueForMetrics } from "../../src/sync/metricEvents.ts";
import { insertRecords, makeRecord } from "../report/fixtures.ts";

const T0 = Date.UTC(2024, 5, 1, 12, 0, 0);
let store: Store;
afterEach(() => store?.close());

const version = (n: number, extra: Record<string, unknown> = {}) => ({
  configId: "cfg",
  version: n,
  lastModifiedTime: T0 + n * 1000,
  lastModifierId: "u1",
  lastModifierName: "Alice",
  raw: { id: "cfg", name: "limits", version: n, lastModifiedTime: T0 + n * 1000, ...extra },
});
const ctx = { runId: null, now: T0 };

describe("config versions", () => {
  it("stores each version once; other content under a known number is a revision, kept once", async () => {
    store = openStore(":memory:");
    expect(await storeConfigVersions(store, "limits", [version(2), version(1)], ctx)).toEqual({
      inserted: 2,
      mutations: [],
    });
    expect(await storeConfigVersions(store, "limits", [version(1), version(2)], ctx)).toEqual({
      inserted: 0,
      mutations: [],
    });
    const changed = version(1, { description: "rewritten" });
    const again = await storeConfigVersions(store, "limits", [changed, version(2)], ctx);
    expect(again.mutations).toEqual([
      {
        configKey: "limits",
        version: 1,
        storedHash: recordHash(version(1).raw),
        receivedHash: recordHash(changed.raw),
      },
    ]);
    await storeConfigVersions(store, "limits", [changed], ctx);
    const sqlite = sqliteOf(store);
    expect(sqlite.prepare("SELECT version FROM config_versions ORDER BY entity_seq").pluck().all()).toEqual([
      1, 2,
    ]);
    expect(sqlite.prepare("SELECT count(*) FROM config_version_revisions").pluck().get()).toBe(1);
  });

  it("links every content row of the four tables in one chain, its head mirrored in meta", async () => {
    store = openStore(":memory:");
    await storeConfigVersions(store, "limits", [version(1)], ctx);
    const exp = { id: "e1", name: "Exp", status: "active", raw: { id: "e1", status: "active" } };
    expect(await storeExperimentSnapshots(store, "layer", [exp], ctx)).toBe(1);
    expect(await storeExperimentSnapshots(store, "layer", [exp], ctx)).toBe(0);
    await storeConfigVersions(store, "limits", [version(1, { tags: ["x"] })], ctx);
    const rows = await readEntityChain(store, async (chain) => {
      const all: EntityChainRow[] = [];
      for await (const row of chain) all.push(row);
      return all;
    });
    expect(rows.map((r) => r.tbl)).toEqual([
      "config_versions",
      "experiment_snapshots",
      "config_version_revisions",
    ]);
    let link = CHAIN_GENESIS;
    for (const row of rows) {
      link = chainLink(link, row.record_hash);
      expect(row.entity_chain_hash).toBe(link);
    }
    const head = sqliteOf(store)
      .prepare("SELECT value FROM meta WHERE key = ?")
      .pluck()
      .get(ENTITY_CHAIN_HEAD_KEY);
    expect(JSON.parse(head as string)).toEqual({ seq: 3, hash: link });
  });
});

describe("configsDueForVersions", () => {
  it("names a config once a versioned edit is stored after its last read, never a gate or a review", async () => {
    store = openStore(":memory:");
    insertRecords(store, [
      makeRecord({ id: "r1", at: T0, name: "limits", actionType: "dynamic_config_create" }),
      makeRecord({ id: "r2", at: T0, name: "a_gate", actionType: "gate_update" }),
      makeRecord({ id: "r3", at: T0, name: "other", actionType: "config_review_create" }),
    ]);
    expect((await configsDueForVersions(store)).map((d) => d.name)).toEqual(["limits"]);
    await recordEntityFetch(
      store,
      { kind: "config_versions", key: "limits", outcome: "forbidden", items: 0, invalid: 0 },
      ctx,
    );
    expect((await configsDueForVersions(store)).map((d) => d.name)).toEqual(["limits"]);
    await recordEntityFetch(
      store,
      { kind: "config_versions", key: "limits", outcome: "ok", items: 1, invalid: 0 },
      ctx,
    );
    expect((await configsDueForVersions(store)).map((d) => d.name)).toEqual([]);
    insertRecords(store, [
      makeRecord({ id: "r4", at: T0 + 5000, name: "limits", actionType: "config_default_value_update" }),
    ]);
    expect((await configsDueForVersions(store)).map((d) => d.name)).toEqual(["limits"]);
  });
});

describe("eventsDueForMetrics", () => {
  it("reads the named events, those read before and those the stored lineage names, each once", async () => {
    store = openStore(":memory:");
    expect(await eventsDueForMetrics(store, ["purchase"])).toEqual(["purchase"]);
    await recordEntityFetch(
      store,
      { kind: "event_metrics", key: "purchase", outcome: "ok", items: 1, invalid: 0 },
      ctx,
    );
    await storeMetricSnapshots(
      store,
      "purchase",
      [
        {
          id: "funnel::funnel",
          raw: { id: "funnel::funnel", lineage: { events: ["purchase", "checkout"], metrics: [] } },
        },
      ],
      ctx,
    );
    expect(await eventsDueForMetrics(store, ["signup"])).toEqual(["signup", "checkout", "purchase"]);
  });
});
