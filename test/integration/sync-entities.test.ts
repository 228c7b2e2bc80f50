// Entity history through the CLI against the simulator over 127.0.0.1: which reads a sync makes
// (a nightly run without a config edit makes no version request), what it stores, links and diffs,
// and how it takes a deleted config (404), a key without the scope (403) and a mutated version. The
// 403's sync is spawned (end to end); the other runs of the CLI are in this process.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import {
  daysAgo,
  simEnv,
  startTestSimulator,
  tempDbPath,
  useTestSimulator,
  withDb,
} from "../helpers/simSync.ts";

const startSim = useTestSimulator();

/** Requests the client sent to routes whose path contains `part`. */
function requestsTo(sim: RunningSimulator, part: string): number {
  return Object.entries(sim.control.counters().requests)
    .filter(([label]) => label.includes(part))
    .reduce((sum, [, n]) => sum + n, 0);
}

async function sync(sim: RunningSimulator, db: string, extra: string[] = []) {
  const result = await runCliInProcess(
    ["sync", "--since", daysAgo(125), "--no-coverage", "--json", ...extra],
    {
      env: simEnv(sim, db),
    },
  );
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

const count = (db: string, sql: string, ...params: unknown[]) =>
  withDb(
    db,
    (d) =>
      d
        .prepare(sql)
        .pluck()
        .get(...params) as number,
  );

/** A layer the simulated history created and put experiments in. */
async function layerWithExperiments(sim: RunningSimulator): Promise<string> {
  for (const layer of sim.entities.layerIds()) {
    const listed = await fetch(`${sim.url}/console/v1/layers/${layer}/experiments`, {
      headers: { [sim.settings.authHeader]: sim.settings.apiKey },
    }).then((r) => r.json() as Promise<{ data: unknown[] }>);
    if (listed.data.length > 0) return layer;
  }
  throw new Error("the simulated history put no experiment in a layer");
}

describe("sync reads entity history", () => {
  it("backfill reads each edited config once; a nightly run without a config edit reads no version", async () => {
    // The generated history follows the weekday of its clock (now): with 600 records, one weekday in
    // seven held only two of the four edit kinds below; 1,200 hold three or four on every weekday.
    const sim = await startSim({ records: 1200 });
    const db = tempDbPath();
    // Every edited config in this run (the entity budget has its own tests): how many there are follows
    // the clock's weekday, and some days exceed the default budget.
    const first = await sync(sim, db, ["--entity-budget", "100000"]);
    const configs = count(
      db,
      `SELECT count(DISTINCT name) FROM audit_logs WHERE action_type IN ('dynamic_config_create', 'config_conditions_update', 'config_default_value_update', 'config_state_toggle', 'config_add_tag', 'config_revert', 'config_resalt', 'config_environments_update', 'dynamic_config_update_owners')`,
    );
    expect(configs).toBeGreaterThan(3);
    expect(first.entities).toMatchObject({ configs, forbidden: false, notFound: [] });
    expect(requestsTo(sim, "/versions")).toBe(configs);
    // Plus one read per layer the history created (its layer_create record names it).
    const layers = count(
      db,
      "SELECT count(DISTINCT name) FROM audit_logs WHERE action_type = 'layer_create'",
    );
    expect(first.entities.layers).toBe(layers);
    expect(first.entities.requests).toBe(configs + layers);
    // The generator stores one version per audited edit: every version is linked, and only one.
    const versions = count(db, "SELECT count(*) FROM config_versions");
    expect(first.entities.newVersions).toBe(versions);
    expect(count(db, "SELECT count(*) FROM config_edit_links")).toBe(versions);
    // Each kind of edit the history holds shows as its field in the versions' diffs.
    const fieldOf: Record<string, string> = {
      config_default_value_update: "defaultValue",
      config_conditions_update: "rules",
      config_state_toggle: "isEnabled",
      config_add_tag: "tags",
    };
    const editKinds = Object.keys(fieldOf).filter(
      (actionType) => count(db, "SELECT count(*) FROM audit_logs WHERE action_type = ?", actionType) > 0,
    );
    expect(editKinds.length).toBeGreaterThanOrEqual(3);
    for (const actionType of editKinds) {
      expect(
        count(db, "SELECT count(*) FROM config_version_changes WHERE field = ?", fieldOf[actionType]),
        actionType,
      ).toBeGreaterThan(0);
    }

    sim.control.resetCounters();
    sim.control.append([{ name: "Someone", actionType: "user_login", changeLog: "logged in" }]);
    const nightly = await sync(sim, db);
    expect(nightly.inserted).toBe(1);
    expect(requestsTo(sim, "/versions")).toBe(0);
    expect(nightly.entities).toMatchObject({ configs: 0, newVersions: 0 });

    // A config edit (its version and its record, same second and modifier) brings exactly one read.
    const name = sim.entities.configNames()[1]!;
    const actor = { id: "actorActorActor00001", name: "Dana", email: "dana@example.com" };
    const at = sim.control.now();
    // 777: outside the generator's limits (1–50), so the planted version always changes $.limit.
    sim.entities.plantVersion(name, { defaultValue: { limit: 777 } }, actor, at);
    sim.control.append([
      { at, name, actionType: "config_default_value_update", changeLog: "Updated", actor },
    ]);
    sim.control.resetCounters();
    const edited = await sync(sim, db);
    expect(requestsTo(sim, "/versions")).toBe(1);
    expect(edited.entities).toMatchObject({ configs: 1, newVersions: 1 });
    const linked = withDb(db, (d) =>
      d
        .prepare(
          `SELECT l.version, c.field, c.path, c.new_value FROM audit_logs a JOIN config_edit_links l ON l.audit_log_id = a.id
           JOIN config_version_changes c ON c.config_key = l.config_key AND c.version = l.version
           WHERE a.action_type = 'config_default_value_update' AND a.updated_by_user_id = ?`,
        )
        .all(actor.id),
    );
    expect(linked).toContainEqual(
      expect.objectContaining({ field: "defaultValue", path: "$.limit", new_value: "777" }),
    );

    const verify = await runCliInProcess(["verify", "--db", db], { env: simEnv(sim, db) });
    expect(verify.code, verify.stderr).toBe(0);
    const chainRows = count(
      db,
      "SELECT (SELECT count(*) FROM config_versions) + (SELECT count(*) FROM config_version_revisions) + (SELECT count(*) FROM experiment_snapshots) + (SELECT count(*) FROM metric_snapshots)",
    );
    expect(verify.stdout).toContain(`entity chain of ${chainRows} rows intact`);
  });

  it("stores each diff case of a version: default value paths, enabled, tags, description, rules, other fields", async () => {
    const sim = await startSim({ records: 200 });
    const db = tempDbPath();
    await sync(sim, db, ["--no-entities"]);
    expect(count(db, "SELECT count(*) FROM entity_fetches")).toBe(0);
    const name = sim.entities.configNames()[0]!;
    const actor = { id: "actorActorActor00002", name: "Eve", email: "" };
    const plant = (patch: Parameters<RunningSimulator["entities"]["plantVersion"]>[1], second: number) => {
      const at = sim.control.now() + second * 1000;
      sim.entities.plantVersion(name, patch, actor, at);
      sim.control.append([{ at, name, actionType: "config_default_value_update", changeLog: "edit", actor }]);
    };
    plant({ defaultValue: { color: "red", size: { w: 1 } } }, 1);
    plant({ defaultValue: { color: "blue", size: {} } }, 2);
    plant({ enabled: false, tags: ["growth"], description: "now documented" }, 3);
    plant({ overrides: { targetApps: "ios", team: "payments" } }, 4);
    await sync(sim, db);
    const rows = withDb(
      db,
      (d) =>
        d
          .prepare(
            "SELECT field, path, change, old_value, new_value FROM config_version_changes WHERE config_key = ? AND version > (SELECT max(version) - 4 FROM config_versions WHERE config_key = ?) ORDER BY version, id",
          )
          .all(name, name) as {
          field: string;
          path: string | null;
          change: string;
          old_value: string | null;
          new_value: string | null;
        }[],
    );
    expect(rows).toContainEqual({
      field: "defaultValue",
      path: "$.color",
      change: "changed",
      old_value: '"red"',
      new_value: '"blue"',
    });
    expect(rows).toContainEqual({
      field: "defaultValue",
      path: "$.size.w",
      change: "removed",
      old_value: "1",
      new_value: null,
    });
    expect(rows).toContainEqual({
      field: "isEnabled",
      path: null,
      change: "changed",
      old_value: "true",
      new_value: "false",
    });
    expect(rows).toContainEqual(
      expect.objectContaining({ field: "tags", change: "changed", new_value: '["growth"]' }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({ field: "description", new_value: '"now documented"' }),
    );
    expect(rows).toContainEqual(expect.objectContaining({ field: "targetApps", new_value: '"ios"' }));
    expect(rows).toContainEqual(expect.objectContaining({ field: "team", new_value: '"payments"' }));
    expect(rows.some((r) => r.field === "version" || r.field === "lastModifiedTime")).toBe(false);
  });

  it("records a deleted config (404) and goes on; detects a version mutated under its number", async () => {
    const sim = await startSim({ records: 300 });
    const db = tempDbPath();
    await sync(sim, db);
    const [kept, gone] = sim.entities.configNames() as [string, string];
    sim.entities.deleteConfig(gone);
    expect(sim.entities.mutateVersion(kept, 1, { description: "rewritten after the fact" })).toBe(true);
    sim.control.append([
      { name: gone, actionType: "config_state_toggle", changeLog: "Disabled" },
      { name: kept, actionType: "config_add_tag", changeLog: "Added tag" },
    ]);
    const next = await sync(sim, db);
    expect(next.entities.notFound).toEqual([`config_versions:${gone}`]);
    expect(next.entities.mutatedVersions).toEqual([expect.objectContaining({ configKey: kept, version: 1 })]);
    expect(next.warningMessages.join("\n")).toContain(`${kept} v1`);
    expect(
      count(db, "SELECT count(*) FROM entity_fetches WHERE entity_key = ? AND outcome = 'not_found'", gone),
    ).toBe(1);
    expect(
      count(db, "SELECT count(*) FROM config_version_revisions WHERE config_key = ? AND version = 1", kept),
    ).toBe(1);
    expect(
      withDb(db, (d) =>
        d.prepare("SELECT json_extract(raw, '$.description') FROM config_version_revisions").pluck().get(),
      ),
    ).toBe("rewritten after the fact");
  });

  it("a key without the entity scope: one 403, reported once, and the audit sync completes", async () => {
    const sim = await startSim({ records: 300 });
    const db = tempDbPath();
    sim.entities.denyEntityReads(true);
    const result = await runCli(["sync", "--since", daysAgo(125), "--no-coverage"], { env: simEnv(sim, db) });
    expect(result.code, result.stderr).toBe(0);
    expect(count(db, "SELECT count(*) FROM audit_logs")).toBe(sim.control.size());
    expect(requestsTo(sim, "/versions") + requestsTo(sim, "/experiments") + requestsTo(sim, "/metrics")).toBe(
      1,
    );
    expect(result.stdout.match(/HTTP 403/g)).toHaveLength(2); // the warning line and the entities line
    expect(result.stdout).not.toContain(sim.settings.apiKey);
    expect(count(db, "SELECT count(*) FROM entity_fetches WHERE outcome = 'forbidden'")).toBe(1);
    expect(count(db, "SELECT outcome = 'ok' FROM sync_runs ORDER BY id DESC LIMIT 1")).toBe(1);
  });
});

// One 1,500-record history (layers with experiments) for the two tests below, in order: the first
// backfills it; the second's own first sync then adds nothing (run alone, it backfills).
describe("sync reads experiments and metrics of one history", () => {
  let sim: RunningSimulator;
  let db: string;
  let layer: string;
  beforeAll(async () => {
    sim = await startTestSimulator({ records: 1500 });
    db = tempDbPath();
    layer = await layerWithExperiments(sim);
  });
  afterAll(async () => {
    await sim?.close();
  });

  it("reads the experiments of the layers the audit log names, and the metrics of --event", async () => {
    const webhook = await fetch(`${sim.url}/v1/webhooks/event_webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", [sim.settings.authHeader]: sim.settings.serverSecret },
      body: JSON.stringify({ event: "purchase", user: { userID: "u1" }, timestamp: Date.now() }),
    });
    expect(webhook.status).toBe(202);
    const first = await sync(sim, db, ["--event", "purchase"]);
    const named = count(db, "SELECT count(DISTINCT name) FROM audit_logs WHERE action_type = 'layer_create'");
    expect(named).toBeGreaterThan(0);
    expect(first.entities).toMatchObject({ layers: named, events: 1, metricSnapshots: 3 });
    expect(count(db, "SELECT count(*) FROM experiment_snapshots WHERE layer_id = ?", layer)).toBeGreaterThan(
      0,
    );
    expect(count(db, "SELECT count(*) FROM experiment_snapshots")).toBe(first.entities.experimentSnapshots);
    expect(
      withDb(db, (d) =>
        d.prepare("SELECT json_extract(raw, '$.lineage.events[0]') FROM metric_snapshots").pluck().all(),
      ),
    ).toEqual(["purchase", "purchase", "purchase"]);
    // Next run: nothing moved, so the layer is not read again; the event's metrics are (lineage kept current) but unchanged.
    sim.control.resetCounters();
    const second = await sync(sim, db);
    expect(requestsTo(sim, "/experiments")).toBe(0);
    expect(second.entities).toMatchObject({ layers: 0, events: 1, metricSnapshots: 0 });
  });

  it("plants each reconciliation finding in the simulator and finds it in the report", async () => {
    await sync(sim, db);
    const [silent, unversioned] = sim.entities.configNames() as [string, string];
    const actor = { id: "actorActorActor00003", name: "Finn", email: "" };
    // A version with no audit record, then a recorded edit that makes the sync read the config again.
    const at = sim.control.now();
    sim.entities.plantVersion(silent, { description: "changed in silence" }, actor, at - 5000);
    sim.entities.plantVersion(silent, { tags: ["audited"] }, actor, at);
    sim.control.append([{ at, name: silent, actionType: "config_add_tag", changeLog: "Added tag", actor }]);
    // A config edit that produced no version.
    sim.control.append([
      { at, name: unversioned, actionType: "config_description_update", changeLog: "Edited", actor },
    ]);
    // An experiment whose status the audit log never shows changing.
    const experiments = await fetch(`${sim.url}/console/v1/layers/${layer}/experiments`, {
      headers: { [sim.settings.authHeader]: sim.settings.apiKey },
    }).then((r) => r.json() as Promise<{ data: { name: string; status: string }[] }>);
    const target = experiments.data.find((e) => e.status !== "abandoned")!;
    sim.entities.forceExperimentStatus(target.name, "abandoned");
    // Any experiment state change makes the sync read the layers again (a record names no layer).
    sim.control.append([
      { at, name: "another experiment", actionType: "experiment_start", changeLog: "Started" },
    ]);
    await sync(sim, db);

    const out = join(db, "..", "reports");
    const day = new Date(at).toISOString().slice(0, 10);
    const report = await runCliInProcess(
      ["report", "--from", day, "--to", day, "--db", db, "--out", out, "--format", "md"],
      {
        env: simEnv(sim, db),
      },
    );
    expect(report.code, report.stderr).toBe(0);
    const md = readFileSync(join(out, readdirSync(out).find((f) => f.startsWith("compliance_"))!), "utf8");
    const between = (a: string, b: string) => md.slice(md.indexOf(a), md.indexOf(b));
    const esc = (text: string) => text.replace(/[_`|*\\[\]()<>#+\-!:]/g, (c) => `\\${c}`);
    expect(between("### Config versions with no audit record", "### Config edits with no version")).toContain(
      `| ${esc(silent)} |`,
    );
    expect(between("### Config edits with no version", "### Experiments whose")).toContain(
      `| ${esc(unversioned)} |`,
    );
    const contradictions = between("### Experiments whose", "## Experiment timelines");
    expect(contradictions).toContain(`| ${esc(target.name)} |`);
    expect(contradictions).toContain("| abandoned |");
    expect(between("## Config edits: before and after", "## Reconciliation")).toContain("tags");
  });
});

describe("sync quarantines entity items", () => {
  it("quarantines an entity item that fails its schema, with its issues, and verify still passes", async () => {
    const sim = await startSim({ records: 300 });
    const db = tempDbPath();
    const name = sim.entities.configNames()[0]!;
    expect(sim.entities.mutateVersion(name, 1, { lastModifiedTime: "yesterday" })).toBe(true);
    const first = await sync(sim, db);
    expect(first.entities.invalid).toBe(1);
    const rows = withDb(db, (d) =>
      d
        .prepare(
          "SELECT request_path, issues, server_day, json_extract(raw, '$.lastModifiedTime') AS t FROM quarantine",
        )
        .all(),
    ) as { request_path: string; issues: string; server_day: string | null; t: string }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]?.request_path).toContain("/versions");
    expect(rows[0]?.t).toBe("yesterday");
    expect(rows[0]?.server_day).toBeNull();
    expect(JSON.parse(rows[0]?.issues ?? "[]")).toEqual([
      expect.objectContaining({ path: ["lastModifiedTime"], code: "invalid_type" }),
    ]);
    const verify = await runCliInProcess(["verify", "--db", db], { env: simEnv(sim, db) });
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toContain("quarantine: 1 row matches its digest");
  });
});
