// The entity reads against the real simulator over 127.0.0.1: every page in order, repeats dropped,
// 404 and 403 as answers, 5xx and 429 retried through the client's own rules.
import { afterEach, describe, expect, it } from "vitest";
import type { ConsoleApiClient } from "../../src/api/consoleClient.ts";
import { createConsoleClient } from "../../src/api/consoleClient.ts";
import { listConfigVersions, listEventMetrics, listLayerExperiments } from "../../src/api/entities.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { startTestSimulator } from "../helpers/simSync.ts";

let sim: RunningSimulator | undefined;
let client: ConsoleApiClient | undefined;

afterEach(async () => {
  await client?.close();
  await sim?.close();
  sim = undefined;
  client = undefined;
});

async function setup() {
  // 1,500 records: a 600-record history (the helper's default) has no experiment left in any layer at
  // some instants (two hours a week), and a test below reads a populated layer.
  sim = await startTestSimulator({ records: 1500 });
  client = createConsoleClient({
    baseUrl: sim.url,
    apiKey: sim.settings.apiKey,
    authHeader: sim.settings.authHeader,
    baseDelayMs: 1,
    throttledBaseDelayMs: 1,
    maxDelayMs: 5,
    rateLimits: [{ limit: 100_000, windowMs: 1000 }],
  });
  return { sim, client };
}

const entityRequests = (s: RunningSimulator, part: string) =>
  Object.entries(s.control.counters().requests)
    .filter(([label]) => label.includes(part))
    .reduce((sum, [, n]) => sum + n, 0);

describe("entity reads over HTTP", () => {
  it("reads every version of a config page by page, by the name the audit log gives it", async () => {
    const { sim, client } = await setup();
    const name = sim.entities.configNames().find((n) => n.includes("|"))!;
    const all = await listConfigVersions(client, name);
    if (all.status !== "ok") throw new Error(all.status);
    const count = all.items.length;
    expect(count).toBeGreaterThan(0);
    expect(all.items.map((i) => i.record.version)).toEqual(
      Array.from({ length: count }, (_, i) => count - i),
    );
    sim.control.resetCounters();
    const paged = await listConfigVersions(client, name, { pageSize: 2 });
    if (paged.status !== "ok") throw new Error(paged.status);
    expect(paged.items.map((i) => i.raw)).toEqual(all.items.map((i) => i.raw));
    expect(entityRequests(sim, "/versions")).toBe(Math.ceil(count / 2));
  });

  it("answers not_found for a deleted config and forbidden for a key without the scope", async () => {
    const { sim, client } = await setup();
    const name = sim.entities.configNames()[0]!;
    sim.entities.deleteConfig(name);
    expect(await listConfigVersions(client, name)).toMatchObject({ status: "not_found" });
    sim.entities.denyEntityReads(true);
    const denied = await listLayerExperiments(client, "checkout_layer");
    expect(denied).toMatchObject({ status: "forbidden" });
    expect(denied.status === "forbidden" && denied.message).toContain("403");
    expect(denied.status === "forbidden" && denied.message).not.toContain(sim.settings.apiKey);
  });

  it("retries a 5xx and a 429 on the entity routes like any console read", async () => {
    const { sim, client } = await setup();
    sim.control.queueFaults(["serverError", "rateLimit"]);
    // A layer with experiments: a created layer may list none yet, and which exist depends on the date.
    const layer = sim.entities.populatedLayerIds()[0];
    if (layer === undefined) throw new Error("the simulated history left no experiment in any layer");
    const read = await listLayerExperiments(client, layer);
    expect(read.status === "ok" && read.items.length).toBeGreaterThan(0);
    expect(client.stats()).toMatchObject({ retries: 2, throttled: 1 });
    expect(await listEventMetrics(client, "never_ingested")).toMatchObject({ status: "ok", items: [] });
  });
});
