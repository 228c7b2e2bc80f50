// Entity history written to PostgreSQL and to SQLite side by side: one audit history synced from the
// simulator into SQLite (records only), copied into PostgreSQL, then the real entity part of a sync
// (src/sync/entities.ts, against the same simulator) run on each store with the same clock. The entity
// tables must then be equal row for row, the due lists the same, and `verify` must walk the PostgreSQL
// entity chain (and catch an edited version). The record write path is not on PostgreSQL yet, so later
// audit records reach PostgreSQL by copy.
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXPERIMENT_STATE_CHANGES } from "../../src/api/actionCategories.ts";
import { createConsoleClient } from "../../src/api/consoleClient.ts";
import { EXPERIMENT_LAYER_MOVES, LAYER_ACTIONS } from "../../src/api/entityActions.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { QUARANTINE_DIGEST_KEY } from "../../src/store/digests.ts";
import { ENTITY_CHAIN_HEAD_KEY } from "../../src/store/entityChain.ts";
import {
  configsDueForVersions,
  layersDueForExperiments,
  openStore,
  recordEntityFetch,
  type Store,
} from "../../src/store/syncStore.ts";
import { type EntitySummary, syncEntities } from "../../src/sync/entities.ts";
import { storeMetricSnapshots } from "../../src/sync/entityChanges.ts";
import { eventsDueForMetrics } from "../../src/sync/metricEvents.ts";
import { resolveSyncOptions } from "../../src/sync/options.ts";
import { SyncRun } from "../../src/sync/run.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath, withDb } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";
import { copyStore } from "./copyStore.ts";

const T0 = Date.UTC(2030, 0, 1);
const RUN_ID = 1;

/** Every row of the entity tables (and what meta keeps of them), by table, in a stable order. */
const TABLES: Record<string, string> = {
  config_versions: "SELECT * FROM config_versions ORDER BY id",
  config_version_revisions: "SELECT * FROM config_version_revisions ORDER BY id",
  experiment_snapshots: "SELECT * FROM experiment_snapshots ORDER BY id",
  metric_snapshots: "SELECT * FROM metric_snapshots ORDER BY id",
  entity_fetches: "SELECT * FROM entity_fetches ORDER BY id",
  config_edit_links: 'SELECT * FROM config_edit_links ORDER BY audit_log_id COLLATE "C"',
  config_version_changes: "SELECT * FROM config_version_changes ORDER BY id",
  quarantine: "SELECT * FROM quarantine ORDER BY id",
  meta: `SELECT key, value, updated_at FROM meta WHERE key IN ('entity_chain:head', 'quarantine:digest') ORDER BY key COLLATE "C"`,
};

let sim: RunningSimulator;
let sqlitePath: string;
let url: string;
let lite: Store;
let postgres: Store;

/** Values as text (SQLite integers and PostgreSQL int8 strings compare alike), NULL kept. */
const asText = (rows: Record<string, unknown>[]) =>
  rows.map((row) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : String(v)])),
  );

async function tablesOf(): Promise<{ lite: Record<string, unknown[]>; pg: Record<string, unknown[]> }> {
  const out = { lite: {} as Record<string, unknown[]>, pg: {} as Record<string, unknown[]> };
  for (const [table, query] of Object.entries(TABLES)) {
    out.lite[table] = asText(
      withDb(sqlitePath, (db) => db.prepare(query.replaceAll(' COLLATE "C"', "")).all()) as Record<
        string,
        unknown
      >[],
    );
    out.pg[table] = asText(await queryOnce(url, query));
  }
  return out;
}

/** The entity part of a sync, alone, on `store` at clock `now`: what `flagtrail sync` runs after the records. */
async function entityPass(store: Store, now: number): Promise<EntitySummary | null> {
  const client = createConsoleClient({
    baseUrl: sim.url,
    apiKey: sim.settings.apiKey,
    authHeader: sim.settings.authHeader,
    rateLimits: [{ limit: 100_000, windowMs: 1000 }],
    baseDelayMs: 5,
  });
  try {
    const options = resolveSyncOptions({ events: ["purchase"] }, () => now);
    const run = new SyncRun(store, client, options, RUN_ID, "all", new AbortController().signal);
    return await syncEntities(run);
  } finally {
    await client.close();
  }
}

/** Both engines' answers to the three "what is due" questions. */
async function dueLists(store: Store) {
  return {
    configs: (await configsDueForVersions(store)).map((d) => d.name),
    layers: (
      await layersDueForExperiments(store, LAYER_ACTIONS, EXPERIMENT_STATE_CHANGES, EXPERIMENT_LAYER_MOVES)
    ).map((d) => d.name),
    events: await eventsDueForMetrics(store, ["purchase"]),
  };
}

/** Syncs the simulator's records into SQLite (records only). */
async function syncRecords(): Promise<void> {
  const synced = await runCliInProcess(
    ["sync", "--since", daysAgo(65), "--no-entities", "--no-coverage", "--json"],
    {
      env: simEnv(sim, sqlitePath),
    },
  );
  if (synced.code !== 0) throw new Error(`sync failed: ${synced.stderr}`);
}

/** Copies the audit records SQLite has beyond PostgreSQL's newest into PostgreSQL. */
async function copyNewRecords(): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sqlite = new Database(sqlitePath, { readonly: true });
  try {
    const columns = (
      await client.query<{ name: string }>(
        `SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'audit_logs'
         AND table_schema = current_schema() AND is_generated = 'NEVER' ORDER BY ordinal_position`,
      )
    ).rows.map((r) => `"${r.name}"`);
    const [max] = (await client.query<{ seq: string }>("SELECT coalesce(max(seq), 0) AS seq FROM audit_logs"))
      .rows;
    const rows = sqlite
      .prepare(`SELECT ${columns.join(", ")} FROM audit_logs WHERE seq > ? ORDER BY seq`)
      .raw(true)
      .all(Number(max?.seq)) as unknown[][];
    for (const row of rows) {
      await client.query(
        `INSERT INTO audit_logs (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})`,
        row,
      );
    }
    // The record chain's head and the like, as the SQLite sync left them (the entity writers keep their own).
    const meta = sqlite
      .prepare("SELECT key, value, updated_at FROM meta WHERE key NOT IN (?, ?)")
      .raw(true)
      .all(ENTITY_CHAIN_HEAD_KEY, QUARANTINE_DIGEST_KEY) as unknown[][];
    for (const row of meta) {
      await client.query(
        `INSERT INTO meta (key, value, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        row,
      );
    }
  } finally {
    sqlite.close();
    await client.end();
  }
}

beforeAll(async () => {
  sim = await startTestSimulator({ records: 400, days: 60 });
  // An event with metrics, so that the metric reads have items.
  const webhook = await fetch(`${sim.url}/v1/webhooks/event_webhook`, {
    method: "POST",
    headers: { "content-type": "application/json", [sim.settings.authHeader]: sim.settings.serverSecret },
    body: JSON.stringify({ event: "purchase", user: { userID: "u1" }, timestamp: Date.now() }),
  });
  if (webhook.status !== 202) throw new Error(`webhook answered ${webhook.status}`);
  sqlitePath = tempDbPath("flagtrail-pgentity-");
  url = await freshDatabase("entity");
  await syncRecords();
  await copyStore(sqlitePath, url);
  lite = await openStore(sqlitePath);
  postgres = await openStore(url);
});
afterAll(async () => {
  await lite?.close();
  await postgres?.close();
  await sim?.close();
});

describe("entity history on PostgreSQL and SQLite", () => {
  it("writes the same rows, the same chain and the same due lists on both engines", async () => {
    const before = await dueLists(lite);
    expect(before.configs.length).toBeGreaterThan(3);
    expect(before.layers.length).toBeGreaterThan(0);
    expect(await dueLists(postgres)).toEqual(before);

    // First pass: every edited config's versions, every named layer's experiments, the event's metrics.
    const first = await entityPass(lite, T0);
    expect(await entityPass(postgres, T0)).toEqual(first);
    expect(first).toMatchObject({ configs: before.configs.length, events: 1, metricSnapshots: 3 });
    expect(first?.newVersions).toBeGreaterThan(3);
    expect(first?.experimentSnapshots).toBeGreaterThan(0);
    let tables = await tablesOf();
    expect(tables.pg).toEqual(tables.lite);
    expect(tables.pg.config_edit_links?.length).toBeGreaterThan(0);
    expect(tables.pg.config_version_changes?.length).toBeGreaterThan(0);
    const after = await dueLists(lite);
    expect(after.configs).toEqual([]);
    expect(await dueLists(postgres)).toEqual(after);

    // At the source: a version rewritten under its number, a new version with its record, a deleted
    // config (404), a version that fails its schema, an experiment whose status moved.
    const [kept, gone, broken] = sim.entities.configNames() as [string, string, string];
    const actor = { id: "actorActorActor00009", name: "Gus", email: "" };
    const at = sim.control.now();
    expect(sim.entities.mutateVersion(kept, 1, { description: "rewritten after the fact" })).toBe(true);
    sim.entities.plantVersion(kept, { defaultValue: { limit: 9 } }, actor, at);
    expect(sim.entities.deleteConfig(gone)).toBe(true);
    expect(sim.entities.mutateVersion(broken, 1, { lastModifiedTime: "yesterday" })).toBe(true);
    const layer = before.layers[0] as string;
    const experiments = await fetch(`${sim.url}/console/v1/layers/${layer}/experiments`, {
      headers: { [sim.settings.authHeader]: sim.settings.apiKey },
    }).then((r) => r.json() as Promise<{ data: { name: string; status: string }[] }>);
    const target = experiments.data.find((e) => e.status !== "abandoned");
    if (target) sim.entities.forceExperimentStatus(target.name, "abandoned");
    sim.control.append([
      { at, name: kept, actionType: "config_default_value_update", changeLog: "Updated", actor },
      { at, name: gone, actionType: "config_conditions_update", changeLog: "Updated" },
      { at, name: broken, actionType: "config_add_tag", changeLog: "Added tag" },
      { at, name: "another experiment", actionType: "experiment_start", changeLog: "Started" },
    ]);
    await syncRecords();
    await copyNewRecords();
    const due = await dueLists(lite);
    expect(due.configs).toEqual(expect.arrayContaining([kept, gone, broken]));
    expect(await dueLists(postgres)).toEqual(due);

    const second = await entityPass(lite, T0 + 60_000);
    expect(await entityPass(postgres, T0 + 60_000)).toEqual(second);
    expect(second).toMatchObject({ notFound: [`config_versions:${gone}`], invalid: 1, metricSnapshots: 0 });
    expect(second?.mutatedVersions.map((m) => `${m.configKey} v${m.version}`)).toContain(`${kept} v1`);
    expect(second?.newVersions).toBeGreaterThan(0);
    tables = await tablesOf();
    expect(tables.pg).toEqual(tables.lite);
    expect(tables.pg.config_version_revisions?.length).toBe(1);
    expect(
      tables.pg.entity_fetches?.filter((f) => (f as { outcome: string }).outcome === "not_found"),
    ).toHaveLength(1);
    expect(tables.pg.quarantine?.some((q) => (q as { raw: string }).raw.includes('"yesterday"'))).toBe(true);
    if (target) {
      const changed = tables.pg.experiment_snapshots?.filter(
        (s) => (s as { taken_at: string }).taken_at === String(T0 + 60_000),
      );
      // Only the experiment whose status moved: the others came back unchanged.
      expect(changed?.map((s) => (s as { name: string }).name)).toEqual([target.name]);
    }
  });

  it("quarantines an item seen again once, on both engines", async () => {
    const item = {
      raw: { id: "again", version: "one" },
      issues: [{ code: "custom", path: ["version"], message: "bad" }],
    };
    // Invalid items reach the quarantine with the ok read that returned them, in its transaction.
    const read = { kind: "event_metrics", key: "again", outcome: "ok" as const, items: 1, invalid: 1 };
    for (const store of [lite, postgres]) {
      for (const invalidItems of [[item], [item], [{ ...item, raw: { id: "next" } }]]) {
        const context = {
          runId: null,
          now: T0 + 120_000,
          read: { ...read, invalidItems, requestPath: "/x" },
        };
        await storeMetricSnapshots(store, "again", [], context);
      }
    }
    const tables = await tablesOf();
    // The item seen twice is kept once (and SQLite's rows are PostgreSQL's, below).
    const atX = (tables.pg.quarantine as { request_path: string; record_id: string }[]).filter(
      (row) => row.request_path === "/x",
    );
    expect(atX.map((row) => row.record_id)).toEqual(["again", "next"]);
    expect(tables.pg.quarantine).toEqual(tables.lite.quarantine);
    expect(tables.pg.meta).toEqual(tables.lite.meta);
  });

  it("verify walks the PostgreSQL entity chain, and catches an edited config version", async () => {
    const rows = await queryOnce<{ n: string }>(
      url,
      "SELECT (SELECT count(*) FROM config_versions) + (SELECT count(*) FROM config_version_revisions) + (SELECT count(*) FROM experiment_snapshots) + (SELECT count(*) FROM metric_snapshots) AS n",
    );
    const [lv, pv] = await Promise.all([
      runCliInProcess(["verify", "--db", sqlitePath]),
      runCliInProcess(["verify", "--db", url]),
    ]);
    expect(lv.code, lv.stderr).toBe(0);
    expect(pv.code, pv.stderr).toBe(0);
    expect(pv.stdout).toContain(`entity chain of ${rows[0]?.n} rows intact`);
    expect(pv.stdout).toBe(lv.stdout.replaceAll(sqlitePath, url));

    await queryOnce(
      url,
      `UPDATE config_versions SET raw = replace(raw, '"version":2', '"version":2,"edited":true') WHERE version = 2`,
    );
    const edited = await runCliInProcess(["verify", "--db", url]);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toMatch(/config_versions row \d+ \(entity seq \d+\): record_hash differs/);
  });

  it("lists events due in byte order, from every shape of lineage SQLite's json_each reads", async () => {
    const stores = [
      await openStore(tempDbPath("flagtrail-pgdue-")),
      await openStore(await freshDatabase("due")),
    ];
    const lineages = [
      { events: ["beta", 7, "Zeta", null] },
      { events: { a: "ärger", b: { nested: "no" } } },
      { events: "alpha" },
      { other: ["none"] },
    ];
    const due: string[][] = [];
    for (const store of stores) {
      try {
        const metrics = lineages.map((lineage, i) => ({ id: `m${i}`, raw: { id: `m${i}`, lineage } }));
        await storeMetricSnapshots(store, "purchase", metrics, { runId: null, now: T0 });
        const fetch = { kind: "event_metrics", outcome: "ok", items: 0, invalid: 0 } as const;
        await recordEntityFetch(store, { ...fetch, key: "_under" }, { runId: null, now: T0 });
        await recordEntityFetch(
          store,
          { ...fetch, key: "Zeta", outcome: "forbidden" },
          { runId: null, now: T0 },
        );
        due.push(await eventsDueForMetrics(store, ["named"]));
      } finally {
        await store.close();
      }
    }
    expect(due[0]).toEqual(["named", "Zeta", "_under", "alpha", "beta", "ärger"]);
    expect(due[1]).toEqual(due[0]);
  });
});
