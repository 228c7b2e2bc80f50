// Issue 25: a nightly run over a store whose entity history is complete reads only the entities its
// new records changed: the whole run (audit pages + entity reads) stays within ceil(k / page) + 3
// requests. It read every layer whenever any experiment changed state (an experiment record names no
// layer); now it reads the layer that listed the experiment, and all of them only for an experiment
// the last reads have not seen (its layer is unknown). A config's version list is read only as far as
// the versions not stored yet (it was read whole: one request per 100 versions for each new one).
// Request counts are the simulator's own.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import type { SyncOptions } from "../../src/sync/runSync.ts";
import { startTestSimulator, syncCountingRequests } from "../helpers/simSync.ts";

const NOW = Date.UTC(2026, 10, 20, 20, 0, 0);
const PAGE = 100;
const K = 250;
const AUDIT_PATH = "GET /console/v1/audit_logs";

let sim: RunningSimulator;
let store: Store;
let firstLayers = 0;

beforeAll(async () => {
  sim = await startTestSimulator({ records: 3000, days: 60, now: NOW });
  store = openStore(join(mkdtempSync(join(tmpdir(), "flagtrail-nightly-")), "x.db"));
  // The whole entity history first: no budget, nothing left pending.
  const first = await syncOnce({ since: "2026-09-01", until: "2026-11-21", entityBudget: 1_000_000 }, NOW);
  expect(first.summary.entities?.pending).toBe(0);
  firstLayers = first.summary.entities?.layers ?? 0;
  expect(sim.entities.populatedLayerIds().length).toBeGreaterThanOrEqual(2);
}, 300_000);

afterAll(async () => {
  store?.close();
  await sim?.close();
});

async function syncOnce(options: SyncOptions, at: number) {
  const { summary, requests } = await syncCountingRequests(sim, store, options, at);
  const total = Object.values(requests).reduce((sum, n) => sum + n, 0);
  const entityPaths = Object.keys(requests)
    .filter((path) => path !== AUDIT_PATH)
    .sort();
  return { summary, total, entityPaths };
}

async function layerExperiments(layer: string): Promise<{ name: string; status: string }[]> {
  const response = await fetch(`${sim.url}/console/v1/layers/${encodeURIComponent(layer)}/experiments`, {
    headers: { [sim.settings.authHeader]: sim.settings.apiKey },
  });
  return ((await response.json()) as { data: { name: string; status: string }[] }).data;
}

/** `count` records that change no entity (gates and logins). */
const quiet = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => ({
    name: `${tag}${i}`,
    actionType: i % 2 === 0 ? "gate_update" : "user_login",
  }));

const versionsPath = (config: string) =>
  `GET /console/v1/dynamic_configs/${encodeURIComponent(config)}/versions`;
const layerPath = (layer: string) => `GET /console/v1/layers/${encodeURIComponent(layer)}/experiments`;

describe("a nightly run with entities on", () => {
  it("250 new records with a config edit and an experiment paused: ceil(k/page) + 3 requests in all", async () => {
    const config = sim.entities.configNames()[0] as string;
    const layer = sim.entities.populatedLayerIds()[0] as string;
    const paused = (await layerExperiments(layer)).find((e) => e.status !== "assignment_stopped");
    expect(paused).toBeDefined();
    const experiment = paused?.name as string;
    // At the source: a new version with its record, an experiment paused with its record.
    expect(sim.entities.plantVersion(config, { description: "edited tonight" })).toBe(true);
    expect(sim.entities.forceExperimentStatus(experiment, "assignment_stopped")).toBe(true);
    sim.control.append([
      ...quiet(124, "a"),
      { name: config, actionType: "config_description_update", changeLog: "Edited" },
      { name: experiment, actionType: "experiment_pause_assignment", changeLog: "Paused" },
      ...quiet(K - 126, "b"),
    ]);

    const night = await syncOnce({ pageSize: PAGE }, NOW + 60_000);
    expect(night.summary.inserted).toBe(K);
    expect(night.entityPaths).toEqual([versionsPath(config), layerPath(layer)].sort());
    expect(night.total).toBeLessThanOrEqual(Math.ceil(K / PAGE) + 3);
    expect(night.summary.requests).toBe(night.total);
    expect(night.summary.entities).toMatchObject({ configs: 1, newVersions: 1, layers: 1, pending: 0 });
    // What changed is stored: the history stays complete.
    const db = sqliteOf(store);
    const status = db
      .prepare(
        "SELECT status FROM experiment_snapshots WHERE layer_id = ? AND name = ? ORDER BY entity_seq DESC LIMIT 1",
      )
      .pluck()
      .get(layer, experiment);
    expect(status).toBe("assignment_stopped");
    const description = db
      .prepare(
        "SELECT json_extract(raw, '$.description') FROM config_versions WHERE config_key = ? ORDER BY version DESC LIMIT 1",
      )
      .pluck()
      .get(config);
    expect(description).toBe("edited tonight");
  }, 300_000);

  it("an experiment outside every layer changes: no layer read; a new experiment: every layer read", async () => {
    // An experiment the layer reads saw in none of them (no snapshot under any layer).
    const outside = sqliteOf(store)
      .prepare(
        `SELECT a.name FROM audit_logs a WHERE a.action_type = 'experiment_create'
          AND a.name NOT IN (SELECT name FROM experiment_snapshots) ORDER BY a.seq LIMIT 1`,
      )
      .pluck()
      .get() as string | undefined;
    expect(outside).toBeDefined();
    expect(sim.entities.forceExperimentStatus(outside as string, "abandoned")).toBe(true);
    sim.control.append([...quiet(K - 1, "c"), { name: outside as string, actionType: "experiment_abandon" }]);
    const night = await syncOnce({ pageSize: PAGE }, NOW + 120_000);
    expect(night.entityPaths).toEqual([]);
    expect(night.total).toBeLessThanOrEqual(Math.ceil(K / PAGE) + 3);

    // A new experiment (created through the API, in a layer its record does not name): any layer may
    // list it, so every layer is read, and its snapshot is stored under its layer.
    const layer = sim.entities.layerIds().at(-1) as string;
    const created = await fetch(`${sim.url}/console/v1/experiments`, {
      method: "POST",
      headers: { [sim.settings.authHeader]: sim.settings.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ name: "Nightly layer test", layerID: layer }),
    });
    expect(created.status).toBe(201);
    const next = await syncOnce({ pageSize: PAGE }, NOW + 180_000);
    expect(next.summary.entities?.layers).toBe(firstLayers);
    const stored = sqliteOf(store)
      .prepare("SELECT layer_id FROM experiment_snapshots WHERE name = ?")
      .pluck()
      .all("Nightly layer test");
    expect(stored).toEqual([layer]);
  }, 300_000);

  it("a config with more versions than a page: a new version costs the page that holds it, not the whole list", async () => {
    const config = sim.entities.configNames()[1] as string;
    const total = async () => {
      const response = await fetch(
        `${sim.url}/console/v1/dynamic_configs/${encodeURIComponent(config)}/versions?limit=1`,
        {
          headers: { [sim.settings.authHeader]: sim.settings.apiKey },
        },
      );
      return ((await response.json()) as { pagination: { totalItems: number } }).pagination.totalItems;
    };
    const stored = () =>
      sqliteOf(store)
        .prepare("SELECT count(*) FROM config_versions WHERE config_key = ?")
        .pluck()
        .get(config);
    // 150 versions at once (a script's edits), one record naming the config: two pages to read them.
    for (let i = 0; i < 150; i += 1) sim.entities.plantVersion(config, { description: `scripted ${i}` });
    sim.control.append([...quiet(K - 1, "d"), { name: config, actionType: "config_description_update" }]);
    const busy = await syncOnce({ pageSize: PAGE }, NOW + 240_000);
    expect(busy.entityPaths).toEqual([versionsPath(config)]);
    expect(busy.summary.entities?.requests).toBe(2);
    expect(busy.summary.entities?.newVersions).toBe(150);
    expect(stored()).toBe(await total());
    expect(await total()).toBeGreaterThan(PAGE);

    // One more: the first page holds it, and with the versions stored it accounts for the whole list.
    sim.entities.plantVersion(config, { description: "one more" });
    sim.control.append([...quiet(K - 1, "e"), { name: config, actionType: "config_description_update" }]);
    const night = await syncOnce({ pageSize: PAGE }, NOW + 300_000);
    expect(night.entityPaths).toEqual([versionsPath(config)]);
    expect(night.summary.entities).toMatchObject({ requests: 1, newVersions: 1, pending: 0 });
    expect(night.total).toBeLessThanOrEqual(Math.ceil(K / PAGE) + 3);
    expect(stored()).toBe(await total());
  }, 300_000);
});
