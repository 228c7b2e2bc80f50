import { describe, expect, it } from "vitest";
import type { EntityWorld } from "../../src/simulator/entities/index.ts";
import { createEntityWorld } from "../../src/simulator/entities/index.ts";
import type { AuditAppender, SimActor, SimAuditRecord, SimResponse } from "../../src/simulator/types.ts";

type Appended = Parameters<AuditAppender["append"]>[0];

const T0 = Date.UTC(2024, 5, 1, 12, 0, 0);
const alice: SimActor = { id: "aliceAliceAliceAlice01", name: "Alice", email: "alice@example.com" };
const bob: SimActor = { id: "bobBobBobBobBobBobBo02", name: "Bob", email: "bob@example.com" };

function setup(seed = 7) {
  const appended: Appended[] = [];
  let clock = T0;
  const appender: AuditAppender = {
    append(entry) {
      appended.push(entry);
      return {
        id: `rec${appended.length}`,
        date: "",
        time: "",
        updatedBy: "",
        updatedByUserID: "",
        changes: {},
        ...entry,
      } as unknown as SimAuditRecord;
    },
  };
  const world = createEntityWorld({ appender, now: () => clock, seed, serverSecret: "secret-x" });
  return {
    world,
    appended,
    tick(ms: number) {
      clock += ms;
    },
  };
}

/** Route dispatch as the server does it: first route whose method and pattern match. */
function call(world: EntityWorld, method: "GET" | "POST", url: string, body?: unknown): SimResponse {
  const parsed = new URL(url, "http://127.0.0.1:4000");
  for (const route of world.routes) {
    const match = route.method === method ? route.pattern.exec(parsed.pathname) : null;
    if (match === null) continue;
    return route.handle(
      {
        method,
        pathname: parsed.pathname,
        query: parsed.searchParams,
        headers: { host: "127.0.0.1:4000" },
        body,
      },
      match.slice(1).map((p) => decodeURIComponent(p)),
    );
  }
  throw new Error(`no route for ${method} ${url}`);
}

// biome-ignore lint/suspicious/noExplicitAny: test access to response bodies
type Json = any;
const bodyOf = (response: SimResponse): Json => response.body;

describe("POST /console/v1/experiments", () => {
  it("creates an experiment in setup with generated group ids, timestamps and the audit record", () => {
    const { world, appended } = setup();
    const response = call(world, "POST", "/console/v1/experiments", {
      name: "Checkout Button",
      description: "Bigger button",
      hypothesis: "It will be clicked more",
      groups: [
        { name: "Control", size: 50, parameterValues: { color: "grey" } },
        { name: "Big", size: 50, parameterValues: { color: "green" }, disabled: true },
      ],
      tags: ["checkout"],
      status: "active",
    });
    expect(response.status).toBe(201);
    const body = bodyOf(response);
    expect(body.message).toBe("Experiment created successfully.");
    const data = body.data;
    expect(data).toMatchObject({
      id: "checkout_button",
      name: "Checkout Button",
      description: "Bigger button",
      status: "setup",
      startTime: null,
      endTime: null,
      layerID: null,
      decisionTime: null,
      createdTime: T0,
      lastModifiedTime: T0,
      creatorName: "CONSOLE API",
      creatorEmail: null,
      lastModifierName: "CONSOLE API",
      tags: ["checkout"],
      allocation: 100,
      version: 1,
    });
    expect(data.creatorID).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(data.owner).toBeUndefined();
    expect(data.groups).toHaveLength(2);
    for (const group of data.groups) expect(group.id).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(data.groups[0].id).not.toBe(data.groups[1].id);
    expect(data.groups[1]).toMatchObject({
      name: "Big",
      disabled: true,
      parameterValues: { color: "green" },
    });
    expect(data.controlGroupID).toBe(data.groups[0].id);
    expect(appended).toEqual([
      expect.objectContaining({
        at: T0,
        name: "Checkout Button",
        actionType: "experiment_create",
        actor: expect.objectContaining({ name: "CONSOLE API" }),
        tags: ["checkout"],
      }),
    ]);
    expect(world.getExperiment("checkout_button")).toEqual(data);
  });

  it("derives the same ids from the same seed and different ids from another", () => {
    const body = { name: "seeded one" };
    const a = bodyOf(call(setup(1).world, "POST", "/console/v1/experiments", body)).data;
    const b = bodyOf(call(setup(1).world, "POST", "/console/v1/experiments", body)).data;
    const c = bodyOf(call(setup(2).world, "POST", "/console/v1/experiments", body)).data;
    expect(a.groups.map((g: Json) => g.id)).toEqual(b.groups.map((g: Json) => g.id));
    expect(a.groups[0].id).not.toBe(c.groups[0].id);
    expect(a.groups.map((g: Json) => g.name)).toEqual(["Control", "Test"]);
  });

  it("keeps an explicit id and places the experiment in the given layer", () => {
    const { world } = setup();
    const data = bodyOf(
      call(world, "POST", "/console/v1/experiments", {
        name: "Layered",
        id: "layered-exp_1",
        layerID: "layer_a",
      }),
    ).data;
    expect(data).toMatchObject({ id: "layered-exp_1", layerID: "layer_a" });
  });

  const limitCases: Array<[string, Record<string, unknown>, string]> = [
    ["name too short", { name: "ab" }, "name"],
    ["name too long", { name: "n".repeat(101) }, "name"],
    ["name with bad characters", { name: "semi;colon" }, "name"],
    ["id too short", { name: "good name", id: "ab" }, "id"],
    ["id too long", { name: "good name", id: "i".repeat(101) }, "id"],
    ["id with a space", { name: "good name", id: "has space" }, "id"],
    ["description over 1000", { name: "good name", description: "d".repeat(1001) }, "description"],
    ["allocation below 0", { name: "good name", allocation: -0.5 }, "allocation"],
    ["allocation above 100", { name: "good name", allocation: 100.5 }, "allocation"],
    ["duration of 1", { name: "good name", duration: 1 }, "duration"],
    ["duration not an integer", { name: "good name", duration: 2.5 }, "duration"],
    ["targetExposures of 1", { name: "good name", targetExposures: 1 }, "targetExposures"],
    ["allocationDuration of 0", { name: "good name", allocationDuration: 0 }, "allocationDuration"],
    [
      "cohortedAnalysisDuration of 1",
      { name: "good name", cohortedAnalysisDuration: 1 },
      "cohortedAnalysisDuration",
    ],
    [
      "fixedAnalysisDuration of -3",
      { name: "good name", fixedAnalysisDuration: -3 },
      "fixedAnalysisDuration",
    ],
    ["scheduledReloadHour 24", { name: "good name", scheduledReloadHour: 24 }, "scheduledReloadHour"],
    ["scheduledReloadHour -1", { name: "good name", scheduledReloadHour: -1 }, "scheduledReloadHour"],
    [
      "scheduledReloadDays item 7",
      { name: "good name", scheduledReloadDays: [0, 7] },
      "scheduledReloadDays.1",
    ],
    [
      "identifierMappingMode",
      { name: "good name", identifierMappingMode: "oneToOne" },
      "identifierMappingMode",
    ],
    [
      "defaultConfidenceInterval",
      { name: "good name", defaultConfidenceInterval: "85" },
      "defaultConfidenceInterval",
    ],
    [
      "defaultConfidenceInterval as number",
      { name: "good name", defaultConfidenceInterval: 95 },
      "defaultConfidenceInterval",
    ],
    ["scheduledReloadType", { name: "good name", scheduledReloadType: "partial" }, "scheduledReloadType"],
    ["analyticsType", { name: "good name", analyticsType: "bootstrap" }, "analyticsType"],
    ["status", { name: "good name", status: "running" }, "status"],
    [
      "group size above 100",
      { name: "good name", groups: [{ name: "A", size: 101, parameterValues: {} }] },
      "groups.0.size",
    ],
    [
      "duplicate group names",
      {
        name: "good name",
        groups: [
          { name: "A", size: 50, parameterValues: {} },
          { name: "A", size: 50, parameterValues: {} },
        ],
      },
      "groups",
    ],
  ];

  it.each(limitCases)("rejects %s with a 400 naming the field", (_label, body, property) => {
    const { world, appended } = setup();
    const response = call(world, "POST", "/console/v1/experiments", body);
    expect(response.status).toBe(400);
    const error = bodyOf(response);
    expect(error.status).toBe(400);
    expect(error.message).toBe("Invalid request. Please check the request input and try again.");
    expect(error.errors.map((e: Json) => e.property)).toEqual([property]);
    expect(typeof error.errors[0].message).toBe("string");
    expect(appended).toEqual([]);
  });

  it("accepts every limit at its boundary", () => {
    const { world } = setup();
    const score = {
      criteriaName: "POWER_ANALYSIS",
      status: "PASSED",
      criteriaDescription: "",
      score: 1,
      weight: 1,
    };
    const response = call(world, "POST", "/console/v1/experiments", {
      name: "n".repeat(100),
      id: "abc",
      description: "d".repeat(1000),
      allocation: 0,
      duration: 2,
      targetExposures: 2,
      allocationDuration: null,
      cohortedAnalysisDuration: 2,
      fixedAnalysisDuration: 2,
      scheduledReloadHour: 23,
      scheduledReloadDays: [0, 6],
      manualQualityScores: Array.from({ length: 10 }, () => score),
      identifierMappingMode: "lastTouchOneToMany",
      defaultConfidenceInterval: "99",
      scheduledReloadType: "incremental",
      analyticsType: "sprt",
    });
    expect(response.status).toBe(201);
    expect(bodyOf(response).data).toMatchObject({
      allocation: 0,
      scheduledReloadDays: [0, 6],
      analyticsType: "sprt",
    });
  });

  it("rejects 11 manualQualityScores", () => {
    const { world } = setup();
    const score = { criteriaName: "X", status: "PASSED", criteriaDescription: "", score: 1, weight: 1 };
    const response = call(world, "POST", "/console/v1/experiments", {
      name: "good name",
      manualQualityScores: Array.from({ length: 11 }, () => score),
    });
    expect(bodyOf(response).errors.map((e: Json) => e.property)).toEqual(["manualQualityScores"]);
  });

  it("names every bad field in one 400", () => {
    const { world } = setup();
    const response = call(world, "POST", "/console/v1/experiments", {
      description: "d".repeat(1001),
      allocation: 101,
      duration: 0,
      scheduledReloadHour: 30,
    });
    expect(response.status).toBe(400);
    expect(
      bodyOf(response)
        .errors.map((e: Json) => e.property)
        .sort(),
    ).toEqual(["allocation", "description", "duration", "name", "scheduledReloadHour"].sort());
    expect(bodyOf(response).errors.find((e: Json) => e.property === "name").message).toBe("name is required");
  });

  it("rejects a duplicate id, explicit or derived from the name, together with other errors", () => {
    const { world, appended } = setup();
    expect(call(world, "POST", "/console/v1/experiments", { name: "My Test" }).status).toBe(201);
    const derived = call(world, "POST", "/console/v1/experiments", { name: "my test" });
    expect(derived.status).toBe(400);
    expect(bodyOf(derived).errors).toEqual([{ property: "id", message: expect.stringContaining("my_test") }]);
    const explicit = call(world, "POST", "/console/v1/experiments", { name: "x", id: "my_test" });
    expect(
      bodyOf(explicit)
        .errors.map((e: Json) => e.property)
        .sort(),
    ).toEqual(["id", "name"]);
    expect(appended).toHaveLength(1);
  });

  it("rejects a body that is not an object", () => {
    const { world } = setup();
    for (const body of [undefined, [], "name", 3]) {
      const response = call(world, "POST", "/console/v1/experiments", body);
      expect(response.status).toBe(400);
      expect(bodyOf(response).errors[0].property).toBe("body");
    }
  });
});

describe("POST /console/v1/experiments/{id}/enable_groups", () => {
  function withExperiment() {
    const ctx = setup();
    call(ctx.world, "POST", "/console/v1/experiments", {
      name: "groups exp",
      groups: [
        { name: "Control", size: 34, parameterValues: {}, disabled: true },
        { name: "A", size: 33, parameterValues: {}, disabled: true },
        { name: "B", size: 33, parameterValues: {}, disabled: true },
      ],
    });
    ctx.appended.length = 0;
    return ctx;
  }

  it("enables only the named groups, bumps version and modifier, and appends an audit record", () => {
    const { world, appended, tick } = withExperiment();
    tick(5_000);
    const response = call(world, "POST", "/console/v1/experiments/groups_exp/enable_groups", {
      group_names: ["A", "Control"],
    });
    expect(response.status).toBe(201);
    const data = bodyOf(response).data;
    expect(data.groups.map((g: Json) => [g.name, g.disabled])).toEqual([
      ["Control", false],
      ["A", false],
      ["B", true],
    ]);
    expect(data).toMatchObject({
      id: "groups_exp",
      version: 2,
      lastModifiedTime: T0 + 5_000,
      createdTime: T0,
    });
    expect(appended).toEqual([
      expect.objectContaining({ at: T0 + 5_000, name: "groups exp", actionType: "experiment_edit" }),
    ]);
    expect(appended[0]!.changeLog).toContain("A");
    expect(appended[0]!.changeLog).toContain("Control");
    expect(world.getExperiment("groups_exp")).toEqual(data);
  });

  it("returns 400 naming unknown groups and changes nothing", () => {
    const { world, appended } = withExperiment();
    const response = call(world, "POST", "/console/v1/experiments/groups_exp/enable_groups", {
      group_names: ["A", "Nope", "Gone"],
    });
    expect(response.status).toBe(400);
    expect(bodyOf(response).errors).toEqual([
      { property: "group_names", message: "unknown group names: Nope, Gone" },
    ]);
    expect((world.getExperiment("groups_exp")!.groups as Json[]).every((g) => g.disabled)).toBe(true);
    expect(appended).toEqual([]);
  });

  it("returns 400 for a missing or malformed group_names", () => {
    const { world } = withExperiment();
    for (const body of [undefined, {}, { group_names: "A" }, { group_names: [] }, { group_names: [1] }]) {
      const response = call(world, "POST", "/console/v1/experiments/groups_exp/enable_groups", body);
      expect(response.status).toBe(400);
      expect(bodyOf(response).errors.length).toBeGreaterThan(0);
    }
  });

  it("returns the real 404 for an unknown experiment", () => {
    const { world } = withExperiment();
    const response = call(world, "POST", "/console/v1/experiments/nope/enable_groups", {
      group_names: ["A"],
    });
    expect(response).toEqual({
      status: 404,
      body: { status: 404, message: "Not Found. The requested resource could not be found." },
    });
  });
});

describe("experiments reported by the history generator", () => {
  it("follows the reported status, times and layer, with the actors as creator and modifier", () => {
    const { world } = setup();
    const report = world.observer.experimentChanged;
    report({
      experimentId: "gen_exp",
      name: "gen exp",
      status: "setup",
      layerId: "L1",
      at: 1000,
      actor: alice,
      actionType: "experiment_create",
    });
    report({
      experimentId: "gen_exp",
      name: "gen exp",
      status: "active",
      layerId: "L1",
      at: 2000,
      actor: bob,
      actionType: "experiment_start",
    });
    expect(world.getExperiment("gen_exp")).toMatchObject({
      status: "active",
      startTime: 2000,
      endTime: null,
      layerID: "L1",
      createdTime: 1000,
      creatorName: "Alice",
      creatorEmail: "alice@example.com",
      lastModifierName: "Bob",
      lastModifiedTime: 2000,
      version: 2,
      owner: { ownerID: alice.id, ownerType: "USER", ownerName: "Alice" },
    });
    report({
      experimentId: "gen_exp",
      name: "gen exp",
      status: "decision_made",
      layerId: "L1",
      at: 3000,
      actor: bob,
      actionType: "experiment_decision_make",
    });
    expect(world.getExperiment("gen_exp")).toMatchObject({
      status: "decision_made",
      endTime: 3000,
      decisionTime: 3000,
    });
    report({
      experimentId: "gen_exp",
      name: "gen exp",
      status: "active",
      layerId: "L1",
      at: 4000,
      actor: bob,
      actionType: "experiment_restart",
    });
    expect(world.getExperiment("gen_exp")).toMatchObject({
      status: "active",
      startTime: 4000,
      endTime: null,
    });
  });

  it("lets enable_groups work on generated experiments' default groups", () => {
    const { world } = setup();
    world.observer.experimentChanged({
      experimentId: "g2",
      name: "g2",
      status: "setup",
      layerId: null,
      at: 1,
      actor: alice,
      actionType: "experiment_create",
    });
    const response = call(world, "POST", "/console/v1/experiments/g2/enable_groups", {
      group_names: ["Test"],
    });
    expect(response.status).toBe(201);
    expect(bodyOf(response).data.groups.map((g: Json) => g.name)).toEqual(["Control", "Test"]);
  });
});

describe("GET /console/v1/layers/{id}/experiments", () => {
  function layerWith(count: number) {
    const ctx = setup();
    for (let i = 0; i < count; i++) {
      ctx.world.observer.experimentChanged({
        experimentId: `exp_${i}`,
        name: `exp ${i}`,
        status: "active",
        layerId: "layer_1",
        at: 1000 + i,
        actor: alice,
        actionType: "experiment_start",
      });
    }
    return ctx;
  }

  it("pages through the layer's experiments with audit-log-style pagination", () => {
    const { world } = layerWith(7);
    const first = bodyOf(call(world, "GET", "/console/v1/layers/layer_1/experiments?limit=3"));
    expect(first.message).toBe("Experiments listed successfully.");
    expect(first.data.map((e: Json) => e.id)).toEqual(["exp_0", "exp_1", "exp_2"]);
    expect(first.pagination).toEqual({
      itemsPerPage: 3,
      pageNumber: 1,
      totalItems: 7,
      nextPage: "127.0.0.1:4000/console/v1/layers/layer_1/experiments?page=2&limit=3",
      previousPage: null,
      all: "127.0.0.1:4000/console/v1/layers/layer_1/experiments",
    });
    const last = bodyOf(call(world, "GET", "/console/v1/layers/layer_1/experiments?limit=3&page=3"));
    expect(last.data.map((e: Json) => e.id)).toEqual(["exp_6"]);
    expect(last.pagination.nextPage).toBeNull();
    expect(last.pagination.previousPage).toBe(
      "127.0.0.1:4000/console/v1/layers/layer_1/experiments?page=2&limit=3",
    );
    const beyond = bodyOf(call(world, "GET", "/console/v1/layers/layer_1/experiments?limit=3&page=4"));
    expect(beyond.data).toEqual([]);
    expect(beyond.pagination).toMatchObject({ totalItems: 7, nextPage: null, pageNumber: 4 });
    const exact = bodyOf(call(world, "GET", "/console/v1/layers/layer_1/experiments?limit=7"));
    expect(exact.data).toHaveLength(7);
    expect(exact.pagination.nextPage).toBeNull();
  });

  it("defaults to 100 per page", () => {
    const { world } = layerWith(101);
    const page = bodyOf(call(world, "GET", "/console/v1/layers/layer_1/experiments"));
    expect(page.data).toHaveLength(100);
    expect(page.pagination).toMatchObject({ itemsPerPage: 100, pageNumber: 1, totalItems: 101 });
  });

  it("moves experiments between layers and keeps a layer that was emptied", () => {
    const { world } = layerWith(2);
    world.observer.experimentChanged({
      experimentId: "exp_0",
      name: "exp 0",
      status: "active",
      layerId: "layer_2",
      at: 5000,
      actor: bob,
      actionType: "experiment_assigned_to_layer",
    });
    const one = bodyOf(call(world, "GET", "/console/v1/layers/layer_1/experiments"));
    expect(one.data.map((e: Json) => e.id)).toEqual(["exp_1"]);
    const two = bodyOf(call(world, "GET", "/console/v1/layers/layer_2/experiments"));
    expect(two.data.map((e: Json) => [e.id, e.layerID])).toEqual([["exp_0", "layer_2"]]);
    world.observer.experimentChanged({
      experimentId: "exp_0",
      name: "exp 0",
      status: "archived",
      layerId: null,
      at: 6000,
      actor: bob,
      actionType: "archive_experiment",
    });
    const emptied = call(world, "GET", "/console/v1/layers/layer_2/experiments");
    expect(emptied.status).toBe(200);
    expect(bodyOf(emptied).pagination.totalItems).toBe(0);
  });

  it("lists experiments created over the API into a layer", () => {
    const { world } = setup();
    call(world, "POST", "/console/v1/experiments", { name: "api one", layerID: "api_layer" });
    const page = bodyOf(call(world, "GET", "/console/v1/layers/api_layer/experiments"));
    expect(page.data.map((e: Json) => e.id)).toEqual(["api_one"]);
  });

  it("returns 404 for a layer never seen and 400 for bad paging", () => {
    const { world } = layerWith(1);
    expect(call(world, "GET", "/console/v1/layers/unknown/experiments").status).toBe(404);
    for (const query of ["limit=0", "limit=abc", "page=0", "page=-1", "limit=2.5"]) {
      const response = call(world, "GET", `/console/v1/layers/layer_1/experiments?${query}`);
      expect(response.status).toBe(400);
      expect(bodyOf(response).errors[0].property).toBe(query.split("=")[0]);
    }
  });
});
