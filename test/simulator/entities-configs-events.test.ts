import { describe, expect, it } from "vitest";
import type { AuditRule } from "../../src/api/schemas.ts";
import { toConsoleRule } from "../../src/simulator/entities/dynamicConfigs.ts";
import type { EntityWorld } from "../../src/simulator/entities/index.ts";
import { createEntityWorld } from "../../src/simulator/entities/index.ts";
import type { AuditAppender, SimActor, SimResponse } from "../../src/simulator/types.ts";

const T0 = Date.UTC(2024, 5, 1, 12, 0, 0);
const alice: SimActor = { id: "aliceAliceAliceAlice01", name: "Alice", email: "alice@example.com" };
const bob: SimActor = { id: "bobBobBobBobBobBobBo02", name: "Bob", email: "bob@example.com" };

function setup() {
  let clock = T0;
  const appender: AuditAppender = {
    append: () => {
      throw new Error("these routes must not append audit records");
    },
  };
  const world = createEntityWorld({ appender, now: () => clock, seed: 3, serverSecret: "s" });
  return {
    world,
    tick(ms: number) {
      clock += ms;
    },
  };
}

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

function rule(id: string, percentagePass: number, extra: Partial<AuditRule> = {}): AuditRule {
  return {
    id,
    groupName: `rule ${id}`,
    percentagePass,
    conditionJSON: [
      { conditionType: 4, operator: 2, value: ["US", "CA"], extraConfig: { field: "country" } },
    ],
    returnValueJSON: JSON.stringify({ color: id }),
    salt: `salt-${id}`,
    environment: null,
    rollouts: [],
    enabledEnvironments: ["production"],
    ...extra,
  };
}

/** Reports `count` edits of config `cfg` as the generator would: version n has n rules, at T0+n s. */
function reportEdits(world: EntityWorld, count: number, configId = "cfg") {
  const reported: AuditRule[][] = [];
  for (let n = 1; n <= count; n++) {
    const rules = Array.from({ length: n }, (_, i) => rule(`r${i}`, 10 * n));
    reported.push(rules);
    world.observer.configChanged({
      configId,
      name: `config ${configId}`,
      kind: "dynamic_config",
      rules,
      at: T0 + n * 1000,
      actor: n === 1 ? alice : bob,
      actionType: n === 1 ? "dynamic_config_create" : "config_conditions_update",
    });
  }
  return reported;
}

describe("GET /console/v1/dynamic_configs/{id}/versions", () => {
  it("serves one full record per reported edit, newest first, consistent with the reports", () => {
    const { world } = setup();
    const reported = reportEdits(world, 5);
    const response = call(world, "GET", "/console/v1/dynamic_configs/cfg/versions?limit=2");
    expect(response.status).toBe(200);
    const page = bodyOf(response);
    expect(page.message).toBe("Dynamic config versions listed successfully.");
    expect(page.data.map((v: Json) => v.version)).toEqual([5, 4]);
    expect(page.pagination).toEqual({
      itemsPerPage: 2,
      pageNumber: 1,
      totalItems: 5,
      nextPage: "127.0.0.1:4000/console/v1/dynamic_configs/cfg/versions?page=2&limit=2",
      previousPage: null,
      all: "127.0.0.1:4000/console/v1/dynamic_configs/cfg/versions",
    });
    const newest = page.data[0];
    expect(newest).toMatchObject({
      id: "cfg",
      name: "config cfg",
      version: 5,
      lastModifiedTime: T0 + 5000,
      createdTime: T0 + 1000,
      creatorName: "Alice",
      lastModifierName: "Bob",
      lastModifierID: bob.id,
      isEnabled: true,
      status: "Enabled",
      defaultValue: {},
      owner: { ownerID: alice.id, ownerType: "USER" },
    });
    expect(newest.rules).toHaveLength(5);
    expect(newest.rules.map((r: Json) => r.id)).toEqual(reported[4]!.map((r) => r.id));
    expect(newest.rules.every((r: Json) => r.passPercentage === 50)).toBe(true);

    // Every version across all pages, in order, matches the report with the same number.
    const all: Json[] = [];
    for (let pageNumber = 1; pageNumber <= 3; pageNumber++) {
      all.push(
        ...bodyOf(call(world, "GET", `/console/v1/dynamic_configs/cfg/versions?limit=2&page=${pageNumber}`))
          .data,
      );
    }
    expect(all.map((v) => v.version)).toEqual([5, 4, 3, 2, 1]);
    for (const version of all) {
      const rules = reported[version.version - 1]!;
      expect(version.lastModifiedTime).toBe(T0 + version.version * 1000);
      expect(version.rules).toEqual(rules.map((r, i) => toConsoleRule(r, i, version.lastModifiedTime)));
    }
    const last = bodyOf(call(world, "GET", "/console/v1/dynamic_configs/cfg/versions?limit=2&page=3"));
    expect(last.pagination.nextPage).toBeNull();
    expect(last.pagination.previousPage).toBe(
      "127.0.0.1:4000/console/v1/dynamic_configs/cfg/versions?page=2&limit=2",
    );
    expect(world.configVersionCount("cfg")).toBe(5);
  });

  it("keeps configs apart and ignores gates", () => {
    const { world } = setup();
    reportEdits(world, 2, "a");
    reportEdits(world, 3, "b");
    world.observer.configChanged({
      configId: "gate_1",
      name: "gate",
      kind: "gate",
      rules: [rule("g", 1)],
      at: T0,
      actor: alice,
      actionType: "gate_update",
    });
    expect(bodyOf(call(world, "GET", "/console/v1/dynamic_configs/a/versions")).pagination.totalItems).toBe(
      2,
    );
    expect(bodyOf(call(world, "GET", "/console/v1/dynamic_configs/b/versions")).pagination.totalItems).toBe(
      3,
    );
    expect(call(world, "GET", "/console/v1/dynamic_configs/gate_1/versions").status).toBe(404);
  });

  it("returns the real 404 for an unknown config and 400 for bad paging", () => {
    const { world } = setup();
    reportEdits(world, 1);
    expect(call(world, "GET", "/console/v1/dynamic_configs/missing/versions")).toEqual({
      status: 404,
      body: { status: 404, message: "Not Found. The requested resource could not be found." },
    });
    const bad = call(world, "GET", "/console/v1/dynamic_configs/cfg/versions?page=zero");
    expect(bad.status).toBe(400);
    expect(bodyOf(bad).errors[0].property).toBe("page");
  });

  it("keeps up with many reports cheaply (one stored entry per report)", () => {
    const { world } = setup();
    const rules = [rule("x", 5)];
    for (let i = 0; i < 200_000; i++) {
      world.observer.configChanged({
        configId: `c${i % 50}`,
        name: "c",
        kind: "dynamic_config",
        rules,
        at: i,
        actor: alice,
        actionType: "config_conditions_update",
      });
    }
    expect(world.configVersionCount("c7")).toBe(4000);
    const page = bodyOf(call(world, "GET", "/console/v1/dynamic_configs/c7/versions?limit=1&page=4000"));
    expect(page.data[0]).toMatchObject({ version: 1, lastModifiedTime: 7 });
  });
});

describe("toConsoleRule", () => {
  it("maps every audit rule field to the console Rule shape", () => {
    const mapped = toConsoleRule(
      rule("abc", 42.5, {
        rollouts: [{ time: T0 - 1, passPercent: 10 }, { time: T0 + 1, passPercent: 50 }, "not a rollout"],
        conditionJSON: [
          {
            conditionType: 7,
            operator: 3,
            value: ["1.2.0", 3],
            extraConfig: { field: "appVersion", customID: "companyID" },
          },
          {},
        ],
      }),
      0,
      T0,
    );
    expect(mapped).toEqual({
      name: "rule abc",
      id: "abc",
      baseID: "abc",
      passPercentage: 42.5,
      conditions: [
        { type: "7", operator: "3", targetValue: ["1.2.0", "3"], field: "appVersion", customID: "companyID" },
        { type: "", operator: "", targetValue: [], field: null, customID: null },
      ],
      environments: ["production"],
      returnValue: { color: "abc" },
      returnValueJson5: '{"color":"abc"}',
      completedAutomatedRollouts: [{ time: T0 - 1, passPercent: 10 }],
      pendingAutomatedRollouts: [{ time: T0 + 1, passPercent: 50 }],
    });
  });

  it("fills gaps: unnamed rule, single environment, non-object return value", () => {
    const mapped = toConsoleRule(
      { id: "r9", environment: "staging", enabledEnvironments: null, returnValueJSON: "true" },
      2,
      T0,
    );
    expect(mapped).toMatchObject({
      name: "Rule 3",
      passPercentage: 100,
      environments: ["staging"],
      returnValue: {},
      returnValueJson5: "true",
      conditions: [],
    });
    expect(toConsoleRule({ id: "r0" }, 0, T0).environments).toBeNull();
    expect(toConsoleRule({ id: "r0", returnValueJSON: "{broken" }, 0, T0).returnValue).toEqual({});
  });
});

describe("POST /v1/webhooks/event_webhook and GET /console/v1/events/{eventName}/metrics", () => {
  const event = { event: "add_to_cart", user: { userID: "u1" }, timestamp: T0, metadata: { sku: "x" } };

  it("is a server-secret route and accepts one valid event with 202 {success: true}", () => {
    const { world } = setup();
    const route = world.routes.find((r) => r.pattern.test("/v1/webhooks/event_webhook"))!;
    expect(route).toMatchObject({ method: "POST", auth: "server" });
    const response = call(world, "POST", "/v1/webhooks/event_webhook", event);
    expect(response).toEqual({ status: 202, body: { success: true } });
    expect(
      call(world, "POST", "/v1/webhooks/event_webhook", {
        ...event,
        user: { stableID: "s1" },
        metadata: undefined,
      }).status,
    ).toBe(202);
    expect(world.eventCount("add_to_cart")).toBe(2);
  });

  const badEvents: Array<[string, unknown, string[]]> = [
    ["missing event", { user: { userID: "u" }, timestamp: 1 }, ["event"]],
    ["blank event", { event: "  ", user: { userID: "u" }, timestamp: 1 }, ["event"]],
    ["event not a string", { event: 5, user: { userID: "u" }, timestamp: 1 }, ["event"]],
    ["missing user", { event: "e", timestamp: 1 }, ["user"]],
    ["user without ids", { event: "e", user: {}, timestamp: 1 }, ["user"]],
    ["empty userID", { event: "e", user: { userID: "" }, timestamp: 1 }, ["user.userID"]],
    ["numeric stableID", { event: "e", user: { stableID: 9 }, timestamp: 1 }, ["user.stableID"]],
    ["timestamp as text", { event: "e", user: { userID: "u" }, timestamp: "2024-01-01" }, ["timestamp"]],
    ["fractional timestamp", { event: "e", user: { userID: "u" }, timestamp: 1.5 }, ["timestamp"]],
    ["missing timestamp", { event: "e", user: { userID: "u" } }, ["timestamp"]],
    ["metadata array", { event: "e", user: { userID: "u" }, timestamp: 1, metadata: [1] }, ["metadata"]],
    [
      "everything wrong",
      { event: "", user: "u", timestamp: -1, metadata: "m" },
      ["event", "metadata", "timestamp", "user"],
    ],
    ["an array of events", [{ event: "e", user: { userID: "u" }, timestamp: 1 }], ["body"]],
  ];

  it.each(badEvents)("rejects %s with a 400 naming the fields", (_label, body, properties) => {
    const { world } = setup();
    const response = call(world, "POST", "/v1/webhooks/event_webhook", body);
    expect(response.status).toBe(400);
    const error = bodyOf(response);
    expect(error.message).toBe("Invalid request. Please check the request input and try again.");
    expect(error.errors.map((e: Json) => e.property).sort()).toEqual(properties);
    expect(world.eventCount("e")).toBe(0);
  });

  it("derives the three event metrics once the event has been ingested", () => {
    const { world, tick } = setup();
    expect(bodyOf(call(world, "GET", "/console/v1/events/add_to_cart/metrics"))).toEqual({
      message: "Metrics listed successfully.",
      data: [],
      pagination: expect.objectContaining({ totalItems: 0, nextPage: null, previousPage: null }),
    });
    tick(60_000);
    call(world, "POST", "/v1/webhooks/event_webhook", event);
    tick(60_000);
    call(world, "POST", "/v1/webhooks/event_webhook", event);
    const page = bodyOf(call(world, "GET", "/console/v1/events/add_to_cart/metrics"));
    expect(page.message).toBe("Metrics listed successfully.");
    expect(page.data.map((m: Json) => m.id)).toEqual([
      "add_to_cart::event_count",
      "add_to_cart::event_dau",
      "add_to_cart::event_user",
    ]);
    for (const metric of page.data) {
      expect(metric).toMatchObject({
        name: "add_to_cart",
        directionality: "increase",
        isPermanent: false,
        isReadOnly: false,
        isHidden: false,
        isVerified: false,
        tags: [],
        createdTime: T0 + 60_000,
        lineage: { events: ["add_to_cart"], metrics: [] },
        team: null,
      });
      expect(metric.id).toBe(`add_to_cart::${metric.type}`);
    }
    expect(page.pagination).toMatchObject({
      totalItems: 3,
      itemsPerPage: 100,
      pageNumber: 1,
      nextPage: null,
    });
    const second = bodyOf(call(world, "GET", "/console/v1/events/add_to_cart/metrics?limit=2&page=2"));
    expect(second.data.map((m: Json) => m.type)).toEqual(["event_user"]);
    expect(second.pagination.previousPage).toBe(
      "127.0.0.1:4000/console/v1/events/add_to_cart/metrics?page=1&limit=2",
    );
    expect(bodyOf(call(world, "GET", "/console/v1/events/other/metrics")).data).toEqual([]);
  });

  it("handles event names that need escaping in the path", () => {
    const { world } = setup();
    world.ingestEvent({ event: "page view/home", user: { userID: "u" }, timestamp: 1 });
    const page = bodyOf(
      call(world, "GET", `/console/v1/events/${encodeURIComponent("page view/home")}/metrics`),
    );
    expect(page.data[0].id).toBe("page view/home::event_count");
  });
});
