// The entity world fed by the real history generator: dynamic config versions must agree with the
// rule edits of the audit log, and layers with the experiments the log created.
import { describe, expect, it } from "vitest";
import type { AuditRule } from "../../src/api/schemas.ts";
import { AuditStore, type StoredRecord } from "../../src/simulator/auditStore.ts";
import { toConsoleRule } from "../../src/simulator/entities/dynamicConfigs.ts";
import { createEntityWorld, type EntityWorld } from "../../src/simulator/entities/index.ts";
import { HistoryGenerator } from "../../src/simulator/history/generator.ts";
import type { SimResponse } from "../../src/simulator/types.ts";
import { ZonedClock } from "../../src/simulator/zonedTime.ts";

const END = Date.UTC(2024, 8, 1);

function generate(seed: number, records: number) {
  const store = new AuditStore(new ZonedClock("America/Los_Angeles"));
  const world = createEntityWorld({
    appender: { append: () => expect.unreachable("no API calls here") },
    now: () => END,
    seed,
    serverSecret: "s",
  });
  new HistoryGenerator(seed, world.observer).fill(store, { records, days: 120, endAt: END });
  const log: StoredRecord[] = [];
  for (let pos = 0; pos < store.size; pos++) log.push(store.at(pos)!);
  return { world, log };
}

function get(world: EntityWorld, path: string): SimResponse {
  const url = new URL(path, "http://127.0.0.1:1");
  for (const route of world.routes) {
    const match = route.method === "GET" ? route.pattern.exec(url.pathname) : null;
    if (match !== null) {
      return route.handle(
        { method: "GET", pathname: url.pathname, query: url.searchParams, headers: {}, body: undefined },
        match.slice(1).map((p) => decodeURIComponent(p)),
      );
    }
  }
  throw new Error(`no route for ${path}`);
}

// biome-ignore lint/suspicious/noExplicitAny: test access to response bodies
type Json = any;

describe("entity world fed by the history generator", () => {
  const { world, log } = generate(11, 4000);

  it("holds one config version per audited change of that config, with the rules after it", () => {
    const ids = world.dynamicConfigIds();
    expect(ids.length).toBeGreaterThan(3);
    let ruleEdits = 0;
    let toggles = 0;
    for (const id of ids) {
      const versions: Json[] = [];
      for (let page = 1; ; page++) {
        const body: Json = get(
          world,
          `/console/v1/dynamic_configs/${id}/versions?limit=50&page=${page}`,
        ).body;
        versions.push(...body.data);
        if (body.pagination.nextPage === null) break;
      }
      versions.reverse(); // oldest first, like the log
      const name = versions[0].name as string;
      // Config changes of that config; reviews are requests about a change, not changes.
      const changes = log.filter(
        (r) =>
          r.name === name &&
          (r.actionType.startsWith("config_") || r.actionType.startsWith("dynamic_config_")) &&
          !r.actionType.includes("review"),
      );
      expect(changes[0]!.actionType).toBe("dynamic_config_create");
      expect(versions.map((v) => v.version)).toEqual(changes.map((_, i) => i + 1));
      let enabled = true;
      changes.forEach((record, i) => {
        const version = versions[i];
        expect(version.lastModifiedTime).toBe(record.at);
        expect(version.lastModifierID).toBe(record.actor.id);
        expect(version.createdTime).toBe(changes[0]!.at);
        const edit = record.changes.rules as { new: AuditRule[] } | undefined;
        if (edit !== undefined) {
          expect(version.rules).toEqual(edit.new.map((rule, index) => toConsoleRule(rule, index, record.at)));
          ruleEdits++;
        } else {
          // Unchanged rules: the same rules as the version before (apart from rollout timing).
          expect(version.rules.map((r: Json) => [r.id, r.passPercentage, r.conditions])).toEqual(
            versions[i - 1].rules.map((r: Json) => [r.id, r.passPercentage, r.conditions]),
          );
        }
        if (record.actionType === "config_state_toggle") {
          enabled = !enabled;
          // Around the words: a hot-fix's label before, a ticket key after (the controls' cases).
          const words = enabled ? "Enabled the config" : "Disabled the config";
          expect(record.changeLog).toMatch(
            new RegExp(`^(Hotfix: |EMERGENCY hotfix: )?${words}( \\(FT-\\d+\\))?$`),
          );
          toggles++;
        }
        expect(version.isEnabled).toBe(enabled);
        expect(version.status).toBe(enabled ? "Enabled" : "Disabled");
      });
    }
    expect(ruleEdits).toBeGreaterThan(ids.length);
    expect(toggles).toBeGreaterThan(0);
  });

  it("lists in each layer only experiments that the log created", () => {
    const created = new Set(log.filter((r) => r.actionType === "experiment_create").map((r) => r.name));
    let seen = 0;
    for (const layer of [
      "checkout_layer",
      "search_layer",
      "onboarding_layer",
      "pricing_layer",
      "feed_layer",
    ]) {
      const response = get(world, `/console/v1/layers/${layer}/experiments?limit=1000`);
      if (response.status === 404) continue;
      for (const experiment of (response.body as Json).data) {
        expect(created.has(experiment.name)).toBe(true);
        expect(experiment.layerID).toBe(layer);
        seen++;
      }
    }
    expect(seen).toBeGreaterThan(0);
  });

  it("is deterministic for a seed", () => {
    const again = generate(11, 4000).world;
    const first = world.dynamicConfigIds()[0]!;
    expect(again.dynamicConfigIds()).toEqual(world.dynamicConfigIds());
    expect(get(again, `/console/v1/dynamic_configs/${first}/versions`).body).toEqual(
      get(world, `/console/v1/dynamic_configs/${first}/versions`).body,
    );
  });
});
