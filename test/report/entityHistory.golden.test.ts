// Golden bytes of the entity-history sections for the report scenario plus planted entity history: a
// version with no audit record, a config edit whose config is gone (404), an edit linked to its version
// (before → after), experiments whose status contradicts the timeline, a decision with its group.
// Regenerate with UPDATE_GOLDEN=1 npx vitest run test/report/entityHistory.golden.test.ts.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENTITY_HEADINGS } from "../../src/report/sections/entityHistory.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { linkAndDiffConfig } from "../../src/store/entityLinks.ts";
import { recordEntityFetch } from "../../src/store/entityWrites.ts";
import { storeConfigVersions, storeExperimentSnapshots } from "../../src/sync/entityChanges.ts";
import type { Store } from "../../src/store/open.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

const GOLDEN = new URL("./golden/entity-history.golden.md", import.meta.url);
const utc = (d: number, h: number, m = 0, s = 0) => Date.UTC(2024, 2, d, h, m, s);
const ctx = { runId: null, now: GENERATED_AT - 3_600_000 };

function configVersion(version: number, at: number, modifierId: string, content: Record<string, unknown>) {
  return {
    configId: "pricingV2Id",
    version,
    lastModifiedTime: at,
    lastModifierId: modifierId,
    lastModifierName: null,
    raw: { id: "pricingV2Id", name: "pricing_v2", version, lastModifiedTime: at, lastModifierID: modifierId, ...content },
  };
}

function experiment(id: string, name: string, status: string, extra: Record<string, unknown> = {}) {
  return { id, name, status, raw: { id, name, status, layerID: "checkout_layer", ...extra } };
}

async function plantEntityHistory(store: Store): Promise<void> {
  await storeConfigVersions(
    store,
    "pricing_v2",
    [
      // No audit record made this one (the scenario has no dynamic_config_create).
      configVersion(1, utc(29, 6), "aliceUserId000000001", { defaultValue: { color: "red" }, isEnabled: true, tags: [] }),
      // Record 9 (config_conditions_update at 02:00:00 UTC by Mallory, no `changes`) made this one.
      configVersion(2, utc(31, 2, 0, 0) + 400, "malloryUserId0000003", {
        defaultValue: { color: "blue", limit: 3 },
        isEnabled: false,
        tags: ["pricing"],
      }),
    ],
    ctx,
  );
  await recordEntityFetch(store, { kind: "config_versions", key: "pricing_v2", outcome: "ok", items: 2, invalid: 0 }, ctx);
  await linkAndDiffConfig(store, "pricing_v2");
  // Record 6's config is gone: its edit has no version.
  await recordEntityFetch(
    store,
    { kind: "config_versions", key: "pricing `config` | v2\nsecond line", outcome: "not_found", items: 0, invalid: 0 },
    ctx,
  );
  await storeExperimentSnapshots(
    store,
    "checkout_layer",
    [
      experiment("exp1", "checkout_flow", "decision_made", {
        decisionReason: "Test won on checkout conversion",
        launchedGroupID: "grpTest",
        groups: [
          { id: "grpControl", name: "Control" },
          { id: "grpTest", name: "Test" },
        ],
      }),
      experiment("exp2", "signup_flow", "active"),
      experiment("exp3", "ghost_test", "active"),
    ],
    ctx,
  );
  await recordEntityFetch(store, { kind: "layer_experiments", key: "checkout_layer", outcome: "ok", items: 3, invalid: 0 }, ctx);
}

let store: Store;
let markdown: string;

beforeAll(async () => {
  store = buildScenarioStore(":memory:", { ruleDiffs: true });
  await plantEntityHistory(store);
  const outDir = mkdtempSync(join(tmpdir(), "flagtrail-entity-report-"));
  await writeReports({ store, ...SCENARIO, outDir, generatedAt: GENERATED_AT });
  markdown = readFileSync(join(outDir, "compliance_2024-03-29_2024-04-01_Europe-Berlin.md"), "utf8");
});
afterAll(() => store.close());

describe("entity history sections", () => {
  it("match their golden bytes", () => {
    const start = markdown.indexOf(`## ${ENTITY_HEADINGS.beforeAfter}`);
    const end = markdown.indexOf("## Report parameters");
    expect(start).toBeGreaterThan(0);
    const sections = markdown.slice(start, end);
    if (process.env.UPDATE_GOLDEN === "1") writeFileSync(GOLDEN, sections);
    expect(sections).toBe(readFileSync(GOLDEN, "utf8"));
  });

  it("list each planted finding", () => {
    const section = (heading: string, next: string) => markdown.slice(markdown.indexOf(heading), markdown.indexOf(next));
    const noRecord = section("### Config versions with no audit record", "### Config edits with no version");
    expect(noRecord).toContain("| pricing\\_v2 | 1 |");
    expect(noRecord).not.toContain("| pricing\\_v2 | 2 |");
    const noVersion = section("### Config edits with no version", "### Experiments whose");
    expect(noVersion).toContain("config not found (404)");
    expect(noVersion).toContain("S000000000000000000006");
    const contradictions = section("### Experiments whose", `## ${ENTITY_HEADINGS.timelines}`);
    expect(contradictions).toContain("| signup\\_flow |");
    expect(contradictions).toContain("| ghost\\_test |");
    expect(contradictions).toContain("(none in the audit log)");
    expect(contradictions).not.toContain("checkout\\_flow");
    const beforeAfter = section(`## ${ENTITY_HEADINGS.beforeAfter}`, `## ${ENTITY_HEADINGS.reconciliation}`);
    expect(beforeAfter).toContain('defaultValue $.color: "red" → "blue"');
    expect(beforeAfter).toContain("isEnabled: true → false");
    const timelines = section(`## ${ENTITY_HEADINGS.timelines}`, "## Report parameters");
    const checkout = timelines.split("\n").find((line) => line.startsWith("| checkout\\_flow |"));
    expect(checkout).toContain("experiment\\_decision\\_make");
    expect(checkout).toMatch(/\| decision\\_made .* \| Test won on checkout conversion \| Test \|$/);
  });
});
