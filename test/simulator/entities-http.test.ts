// The entity routes over real HTTP, through startSimulator (auth, body parsing, routing, JSON out).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.ts";

const API_KEY = "console-entities-test-key";
const SECRET = "secret-entities-test-key";
const NOW = Date.UTC(2024, 8, 1, 15, 0, 0);

let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startSimulator({
    apiKey: API_KEY,
    serverSecret: SECRET,
    seed: 5,
    records: 1500,
    days: 30,
    now: NOW,
  });
});
afterAll(async () => {
  await sim.close();
});

// biome-ignore lint/suspicious/noExplicitAny: test access to JSON bodies
type Json = any;

async function request(
  method: "GET" | "POST",
  path: string,
  options: { body?: unknown; raw?: string; key?: string | null } = {},
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? API_KEY : options.key;
  if (key !== null) headers["STATSIG-API-KEY"] = key;
  let payload: string | undefined;
  if (options.raw !== undefined || options.body !== undefined) {
    headers["content-type"] = "application/json";
    payload = options.raw ?? JSON.stringify(options.body);
  }
  const response = await fetch(`${sim.url}${path}`, { method, headers, body: payload });
  return { status: response.status, body: await response.json() };
}

describe("entity routes over HTTP", () => {
  it("creates an experiment, audits it, enables a group and lists it in its layer", async () => {
    const created = await request("POST", "/console/v1/experiments", {
      body: {
        name: "Http Checkout",
        layerID: "http_layer",
        groups: [
          { name: "Control", size: 50, parameterValues: {} },
          { name: "Treatment", size: 50, parameterValues: { on: true }, disabled: true },
        ],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.message).toBe("Experiment created successfully.");
    expect(created.body.data).toMatchObject({ id: "http_checkout", status: "setup", layerID: "http_layer" });
    expect(created.body.data.createdTime).toBeGreaterThanOrEqual(NOW);

    const audit = await request(
      "GET",
      "/console/v1/audit_logs?id=Http%20Checkout&actionType=experiment_create",
    );
    expect(audit.status).toBe(200);
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({ name: "Http Checkout", updatedBy: "CONSOLE API" });

    const enabled = await request("POST", "/console/v1/experiments/http_checkout/enable_groups", {
      body: { group_names: ["Treatment"] },
    });
    expect(enabled.status).toBe(201);
    expect(enabled.body.data.groups.map((g: Json) => [g.name, g.disabled])).toEqual([
      ["Control", false],
      ["Treatment", false],
    ]);
    const edits = await request(
      "GET",
      "/console/v1/audit_logs?id=Http%20Checkout&actionType=experiment_edit",
    );
    expect(edits.body.data.map((r: Json) => r.changeLog)).toEqual(["Enabled groups: Treatment"]);

    const layer = await request("GET", "/console/v1/layers/http_layer/experiments?limit=1");
    expect(layer.status).toBe(200);
    expect(layer.body.data.map((e: Json) => e.id)).toEqual(["http_checkout"]);
    expect(layer.body.pagination).toMatchObject({
      itemsPerPage: 1,
      pageNumber: 1,
      totalItems: 1,
      nextPage: null,
      previousPage: null,
    });
  });

  it("answers validation errors, unknown ids and bad JSON in the real shapes", async () => {
    const invalid = await request("POST", "/console/v1/experiments", {
      body: { name: "ab", allocation: 200 },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toBe("Invalid request. Please check the request input and try again.");
    expect(invalid.body.errors.map((e: Json) => e.property).sort()).toEqual(["allocation", "name"]);

    const notJson = await request("POST", "/console/v1/experiments", { raw: "{name:" });
    expect(notJson.status).toBe(400);

    const notFound = { status: 404, message: "Not Found. The requested resource could not be found." };
    const missing = await request("POST", "/console/v1/experiments/nope_nope/enable_groups", {
      body: { group_names: ["A"] },
    });
    expect(missing).toEqual({ status: 404, body: notFound });
    expect(await request("GET", "/console/v1/dynamic_configs/unknownConfigId/versions")).toEqual({
      status: 404,
      body: notFound,
    });
    expect((await request("GET", "/console/v1/layers/no_such_layer/experiments")).status).toBe(404);
  });

  it("lists the generated layers' experiments with scheme-less links to this simulator", async () => {
    let found: Json;
    for (const layer of [
      "checkout_layer",
      "search_layer",
      "onboarding_layer",
      "pricing_layer",
      "feed_layer",
    ]) {
      const page = await request("GET", `/console/v1/layers/${layer}/experiments?limit=1`);
      if (page.status === 200 && page.body.pagination.totalItems > 1) {
        found = page;
        break;
      }
    }
    expect(found).toBeDefined();
    const host = new URL(sim.url).host;
    expect(found.body.pagination.nextPage).toMatch(
      new RegExp(`^${host.replace(/\./g, "\\.")}/console/v1/layers/`),
    );
    expect(found.body.pagination.nextPage).toContain("page=2&limit=1");
  });

  it("ingests webhook events with the server secret and derives their metrics", async () => {
    const event = { event: "http_signup", user: { userID: "u1" }, timestamp: NOW, metadata: { plan: "pro" } };
    expect(await request("POST", "/v1/webhooks/event_webhook", { body: event, key: SECRET })).toEqual({
      status: 202,
      body: { success: true },
    });
    const wrongKey = await request("POST", "/v1/webhooks/event_webhook", { body: event, key: API_KEY });
    expect(wrongKey.status).toBe(401);
    expect(JSON.stringify(wrongKey.body)).not.toContain(API_KEY);
    const bad = await request("POST", "/v1/webhooks/event_webhook", {
      body: { event: "http_signup", user: {}, timestamp: "now" },
      key: SECRET,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: Json) => e.property).sort()).toEqual(["timestamp", "user"]);

    const metrics = await request("GET", "/console/v1/events/http_signup/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.body.message).toBe("Metrics listed successfully.");
    expect(metrics.body.data.map((m: Json) => m.id)).toEqual([
      "http_signup::event_count",
      "http_signup::event_dau",
      "http_signup::event_user",
    ]);
    expect(metrics.body.data[0].lineage).toEqual({ events: ["http_signup"], metrics: [] });
    expect((await request("GET", "/console/v1/events/http_signup/metrics", { key: SECRET })).status).toBe(
      401,
    );
    expect((await request("GET", "/console/v1/events/never_sent/metrics")).body.data).toEqual([]);
  });

  it("refuses every entity route without a key", async () => {
    for (const [method, path] of [
      ["POST", "/console/v1/experiments"],
      ["POST", "/console/v1/experiments/x/enable_groups"],
      ["GET", "/console/v1/layers/x/experiments"],
      ["GET", "/console/v1/dynamic_configs/x/versions"],
      ["GET", "/console/v1/events/x/metrics"],
      ["POST", "/v1/webhooks/event_webhook"],
    ] as const) {
      const response = await request(
        method,
        path,
        method === "POST" ? { key: null, body: {} } : { key: null },
      );
      expect(response.status, `${method} ${path}`).toBe(401);
    }
  });
});
