// The entity routes' content beyond rules (default value, enabled, tags, description, decisions) and
// the test powers over them: planted and mutated versions, a deleted config, a key without the scope.
import { describe, expect, it } from "vitest";
import type { EntityWorld } from "../../src/simulator/entities/index.ts";
import { createEntityWorld } from "../../src/simulator/entities/index.ts";
import type { AuditAppender, SimActor, SimResponse } from "../../src/simulator/types.ts";

const T0 = Date.UTC(2024, 5, 1, 12, 0, 0);
const alice: SimActor = { id: "aliceAliceAliceAlice01", name: "Alice", email: "alice@example.com" };

function setup() {
  const appender: AuditAppender = {
    append: () => {
      throw new Error("these routes must not append audit records");
    },
  };
  return createEntityWorld({ appender, now: () => T0 + 60_000, seed: 3, serverSecret: "s" });
}

function get(world: EntityWorld, url: string): SimResponse {
  const parsed = new URL(url, "http://127.0.0.1:4000");
  for (const route of world.routes) {
    const match = route.method === "GET" ? route.pattern.exec(parsed.pathname) : null;
    if (match === null) continue;
    return route.handle(
      { method: "GET", pathname: parsed.pathname, query: parsed.searchParams, headers: {}, body: undefined },
      match.slice(1).map((p) => decodeURIComponent(p)),
    );
  }
  throw new Error(`no route for ${url}`);
}

// biome-ignore lint/suspicious/noExplicitAny: test access to response bodies
type Json = any;
const versionsOf = (world: EntityWorld, config: string): Json[] =>
  (get(world, `/console/v1/dynamic_configs/${encodeURIComponent(config)}/versions`).body as Json).data;

function edit(world: EntityWorld, actionType: string, n: number) {
  world.observer.configChanged({
    configId: "cfgId",
    name: "pricing|limits",
    kind: "dynamic_config",
    rules: [],
    at: T0 + n * 1000,
    actor: alice,
    actionType,
  });
}

describe("dynamic config versions carry the content the audit log only names", () => {
  it("changes defaultValue, isEnabled, tags and description with their action types", () => {
    const world = setup();
    edit(world, "dynamic_config_create", 1);
    edit(world, "config_default_value_update", 2);
    edit(world, "config_state_toggle", 3);
    edit(world, "config_add_tag", 4);
    edit(world, "config_description_update", 5);
    const [v5, v4, v3, v2, v1] = versionsOf(world, "pricing|limits");
    expect(v1).toMatchObject({ version: 1, defaultValue: {}, isEnabled: true, tags: [], description: "" });
    expect(Object.keys(v2.defaultValue)).toHaveLength(1);
    expect(v2.defaultValueJson5).toBe(JSON.stringify(v2.defaultValue));
    expect(v3).toMatchObject({ isEnabled: false, status: "Disabled", defaultValue: v2.defaultValue });
    expect(v4.tags).toHaveLength(1);
    expect(v5.description).not.toBe("");
    expect(v5.tags).toEqual(v4.tags);
  });

  it("answers by id or by name, plants a version without a record, mutates one, deletes the config", () => {
    const world = setup();
    edit(world, "dynamic_config_create", 1);
    expect(versionsOf(world, "cfgId")).toHaveLength(1);
    expect(world.control.plantVersion("pricing|limits", { defaultValue: { limit: 9 } })).toBe(true);
    const [planted] = versionsOf(world, "pricing|limits");
    expect(planted).toMatchObject({ version: 2, defaultValue: { limit: 9 }, lastModifiedTime: T0 + 60_000 });
    expect(world.control.mutateVersion("pricing|limits", 1, { description: "rewritten" })).toBe(true);
    expect(versionsOf(world, "cfgId")[1]).toMatchObject({ version: 1, description: "rewritten" });
    expect(world.control.deleteConfig("cfgId")).toBe(true);
    expect(get(world, "/console/v1/dynamic_configs/pricing%7Climits/versions").status).toBe(404);
    expect(world.control.plantVersion("nope", {})).toBe(false);
  });

  it("answers 403 on every entity read while the key lacks the scope", () => {
    const world = setup();
    edit(world, "dynamic_config_create", 1);
    world.control.denyEntityReads(true);
    expect(get(world, "/console/v1/dynamic_configs/cfgId/versions")).toEqual({
      status: 403,
      body: { status: 403, message: "Forbidden resource" },
    });
    expect(get(world, "/console/v1/events/click/metrics").status).toBe(403);
    expect(get(world, "/console/v1/layers/l1/experiments").status).toBe(403);
    world.control.denyEntityReads(false);
    expect(get(world, "/console/v1/dynamic_configs/cfgId/versions").status).toBe(200);
  });
});

describe("experiments carry their decision", () => {
  it("a decision sets decisionReason and launchedGroupID; a forced status leaves no audit record", () => {
    const world = setup();
    const report = (status: "setup" | "active" | "decision_made", n: number) =>
      world.observer.experimentChanged({
        experimentId: "exp1",
        name: "Checkout test",
        status,
        layerId: "checkout_layer",
        at: T0 + n * 1000,
        actor: alice,
        actionType: status,
      });
    report("setup", 1);
    report("active", 2);
    report("decision_made", 3);
    const [record] = (get(world, "/console/v1/layers/checkout_layer/experiments").body as Json).data;
    const groupIds = record.groups.map((g: Json) => g.id);
    expect(groupIds).toContain(record.launchedGroupID);
    expect(record.decisionReason).toMatch(/^Shipped (Control|Test)/);
    expect(world.control.forceExperimentStatus("Checkout test", "active")).toBe(true);
    expect(world.getExperiment("exp1")).toMatchObject({ status: "active" });
  });
});
