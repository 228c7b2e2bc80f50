// Issue 25: the entity pass reads `concurrency` entities at once inside the run's rate budget (it read
// one at a time), a nightly run reads only the entities its new records changed, and a run keeps to its
// share of the rate limits.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createConsoleClient } from "../../src/api/consoleClient.ts";
import { DEFAULT_RATE_LIMITS, sharedLimits } from "../../src/api/rateBudget.ts";
import { resolveSyncTargets } from "../../src/commands/project.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { runSync } from "../../src/sync/runSync.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { startTestSimulator } from "../helpers/simSync.ts";

const NOW = Date.UTC(2026, 10, 20, 20, 0, 0);
const AUDIT_PATH = "GET /console/v1/audit_logs";

let sim: RunningSimulator | undefined;
let store: Store | undefined;

afterEach(async () => {
  store?.close();
  store = undefined;
  await sim?.close();
  sim = undefined;
});

function clientOf(running: RunningSimulator) {
  return createConsoleClient({
    baseUrl: running.url,
    apiKey: running.settings.apiKey,
    authHeader: running.settings.authHeader,
    rateLimits: [{ limit: 1_000_000, windowMs: 1000 }],
    baseDelayMs: 5,
  });
}

/** Counts the entity list requests in flight at once (audit pages are left out). */
function trackEntityReads(client: ReturnType<typeof createConsoleClient>) {
  const seen = { inFlight: 0, most: 0 };
  const listPage = client.listPage.bind(client);
  client.listPage = async (path, params, signal) => {
    seen.inFlight += 1;
    seen.most = Math.max(seen.most, seen.inFlight);
    try {
      return await listPage(path, params, signal);
    } finally {
      seen.inFlight -= 1;
    }
  };
  return seen;
}

const newStore = () => openStore(join(mkdtempSync(join(tmpdir(), "flagtrail-entitypass-")), "x.db"));

describe("the entity pass", () => {
  it("reads up to --concurrency entities at once", async () => {
    sim = await startTestSimulator({ records: 3000, days: 60, now: NOW, faults: { latencyMs: 40 } });
    store = newStore();
    const client = clientOf(sim);
    const seen = trackEntityReads(client);
    try {
      const summary = await runSync(store, client, {
        since: "2026-09-01",
        until: "2026-11-21",
        concurrency: 4,
        now: () => NOW,
      });
      expect(summary.entities?.configs).toBeGreaterThan(8);
      expect(seen.most).toBe(4);
    } finally {
      await client.close();
    }
  }, 300_000);

  it("a nightly run reads only the configs and layers its new records name", async () => {
    sim = await startTestSimulator({ records: 3000, days: 60, now: NOW });
    store = newStore();
    const client = clientOf(sim);
    try {
      await runSync(store, client, { since: "2026-09-01", until: "2026-11-21", now: () => NOW });
      // 250 records of gates and logins: no entity changed, so the run is its audit requests alone.
      sim.control.append(
        Array.from({ length: 250 }, (_, i) => ({
          name: `n${i}`,
          actionType: i % 2 === 0 ? "gate_update" : "user_login",
        })),
      );
      sim.control.resetCounters();
      const quiet = await runSync(store, client, { pageSize: 100, now: () => NOW + 60_000 });
      const requests = sim.control.counters().requests;
      expect(quiet.entities?.requests).toBe(0);
      expect(requests[AUDIT_PATH]).toBeLessThanOrEqual(Math.ceil(250 / 100) + 3);
      expect(Object.keys(requests)).toEqual([AUDIT_PATH]);
      // Three edits of two known configs: their two version lists, nothing else.
      const [first, second] = sim.entities.configNames();
      sim.control.append([
        { name: first as string, actionType: "config_description_update" },
        { name: second as string, actionType: "config_add_tag" },
        { name: first as string, actionType: "config_state_toggle" },
      ]);
      sim.control.resetCounters();
      const edits = await runSync(store, client, { pageSize: 100, now: () => NOW + 120_000 });
      expect(edits.entities).toMatchObject({ configs: 2, layers: 0, events: 0, pending: 0 });
      const entityPaths = Object.keys(sim.control.counters().requests).filter((p) => p !== AUDIT_PATH);
      expect(entityPaths.sort()).toEqual(
        [first, second]
          .map((name) => `GET /console/v1/dynamic_configs/${encodeURIComponent(name as string)}/versions`)
          .sort(),
      );
    } finally {
      await client.close();
    }
  }, 300_000);
});

describe("the rate share", () => {
  it("scales each documented window, at least one request per window", () => {
    expect(sharedLimits(DEFAULT_RATE_LIMITS, 0.5)).toEqual([
      { limit: 50, windowMs: 10_000 },
      { limit: 450, windowMs: 900_000 },
    ]);
    expect(sharedLimits([{ limit: 1, windowMs: 1000 }], 0.1)).toEqual([{ limit: 1, windowMs: 1000 }]);
    expect(() => sharedLimits(DEFAULT_RATE_LIMITS, 1.5)).toThrow();
  });

  it("defaults to half the limits; the flag wins over the project config's rateShare", () => {
    const env = { FLAGTRAIL_API_KEY: "console-x" };
    const [byDefault] = resolveSyncTargets({}, {}, env);
    expect(byDefault?.tuning.rateLimits).toEqual(sharedLimits(DEFAULT_RATE_LIMITS, 0.5));
    const [flagged] = resolveSyncTargets({ rateShare: 0.25, entityBudget: 7 }, {}, env);
    expect(flagged?.tuning.rateLimits).toEqual(sharedLimits(DEFAULT_RATE_LIMITS, 0.25));
    expect(flagged?.entityBudget).toBe(7);
  });

  it("refuses a share above 1 or not a number, naming the flag (exit 2)", async () => {
    // The first through the real CLI, the others in this process (same parsing, exit code and stderr).
    for (const [i, value] of ["1.5", "half", "0"].entries()) {
      const result = await (i === 0 ? runCli : runCliInProcess)(["sync", "--rate-share", value], {
        env: { FLAGTRAIL_API_KEY: "console-x" },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("--rate-share");
    }
  });
});
