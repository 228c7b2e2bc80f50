// The compliance Markdown's long descriptive tables are capped (MARKDOWN_CAPS): a capped table says how
// many of how many it shows and which CSV holds them all, the CSV keeps every row, the HTML (rendered
// from the complete document) every entity, and a table within its cap is the complete document's bytes.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ReportFormat } from "../../src/report/formats.ts";
import { MARKDOWN_CAPS } from "../../src/report/sections/capped.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { linkAndDiffConfig } from "../../src/store/entityLinks.ts";
import { recordEntityFetch } from "../../src/store/entityWrites.ts";
import { openStore } from "../../src/store/open.ts";
import { storeConfigVersions } from "../../src/sync/entityChanges.ts";
import { insertSyncedRecords, makeRecord, type RawRecord } from "./fixtures.ts";

const CAP = MARKDOWN_CAPS.entities;
const CONFIG_CSV = "config-edits_2024-06-01_2024-06-30.csv";
const EXPERIMENT_CSV = "experiment-state-changes_2024-06-01_2024-06-30.csv";

/** `configs` gates and `experiments` experiments, the i-th with i + 1 changes in June 2024 (no reviews). */
function history(configs: number, experiments: number): RawRecord[] {
  const records: RawRecord[] = [];
  const changes = (name: string, i: number, actionType: string) => {
    for (let n = 0; n <= i; n++)
      records.push(makeRecord({ at: Date.UTC(2024, 5, 1 + (n % 29), 9, i), name, actionType }));
  };
  for (let i = 0; i < configs; i++) changes(`gate_${String(i).padStart(2, "0")}`, i, "gate_update");
  for (let i = 0; i < experiments; i++) changes(`exp_${String(i).padStart(2, "0")}`, i, "experiment_start");
  return records;
}

interface June {
  md: string;
  /** The complete document the HTML is rendered from, as it was in staging. */
  complete: string;
  html: string;
  csv: (name: string) => string;
  manifest: { files: { name: string; rows: number }[] };
}

async function june(
  records: readonly RawRecord[],
  formats: ReportFormat[] = ["csv", "md", "html"],
): Promise<June> {
  const store = openStore(":memory:");
  const outDir = mkdtempSync(join(tmpdir(), "flagtrail-caps-"));
  let complete = "";
  try {
    insertSyncedRecords(store, records);
    await writeReports({
      store,
      from: "2024-06-01",
      to: "2024-06-30",
      outDir,
      formats,
      generatedAt: 0,
      // Before anything is published, the staging directory still holds the complete document.
      publishHook: (step) => {
        if (step !== "remove old manifest") return;
        const staging = join(outDir, readdirSync(outDir).find((n) => n.startsWith(".flagtrail-report-"))!);
        const name = readdirSync(staging).find((n) => n.startsWith("complete-"));
        if (name) complete = readFileSync(join(staging, name), "utf8");
      },
    });
    const read = (name: string) => readFileSync(join(outDir, name), "utf8");
    const stem = "2024-06-01_2024-06-30";
    return {
      md: formats.includes("md") ? read(`compliance_${stem}.md`) : "",
      complete,
      html: formats.includes("html") ? read(`compliance_${stem}.html`) : "",
      csv: read,
      manifest: JSON.parse(read(`manifest_${stem}.json`)),
    };
  } finally {
    store.close();
  }
}

/** A `##` section, up to its query. */
function section(md: string, heading: string): string {
  const start = md.indexOf(`## ${heading}\n`);
  expect(start, heading).toBeGreaterThan(-1);
  return md.slice(start, md.indexOf("<details>", start));
}

/** The first cell of each row of the section's table. */
function names(text: string): string[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("| "))
    .slice(2)
    .map((l) => l.split(" | ")[0]!.slice(2));
}

describe("a descriptive table past its cap", () => {
  it("shows the most changed entities, says how many of how many, and names the CSV holding them all", async () => {
    const configs = CAP + 10;
    const experiments = CAP + 5;
    const { md, csv, manifest } = await june(history(configs, experiments));

    const perConfig = section(md, "Config edits per config");
    // gate_i has i + 1 edits: the last CAP are the most changed, most first.
    const top = Array.from({ length: CAP }, (_, k) => `gate\\_${String(configs - 1 - k).padStart(2, "0")}`);
    expect(names(perConfig)).toEqual(top);
    const edits = (configs * (configs + 1)) / 2;
    const shownEdits = edits - (10 * 11) / 2;
    expect(perConfig).toContain(
      `**${CAP} of ${configs} configs shown**, those with the most changes (${shownEdits} of the ${edits} ` +
        `changes); every change of all ${configs} is a row of \`${CONFIG_CSV}\`.`,
    );
    expect(perConfig).toContain(
      `… and 10 more configs, not shown: their changes are rows of \`${CONFIG_CSV}\`.`,
    );

    const perExperiment = section(md, "Experiment state changes per experiment");
    expect(names(perExperiment)).toHaveLength(CAP);
    expect(perExperiment).toContain(`**${CAP} of ${experiments} experiments shown**`);
    expect(perExperiment).toContain(
      `… and 5 more experiments, not shown: their changes are rows of \`${EXPERIMENT_CSV}\`.`,
    );

    // The CSVs hold every row: every edit of every config, the ones not shown too.
    const rows = csv(CONFIG_CSV)
      .split("\r\n")
      .filter((l) => l.startsWith("2024-"));
    expect(rows).toHaveLength(edits);
    for (let i = 0; i < configs; i++)
      expect(csv(CONFIG_CSV)).toContain(`gate_${String(i).padStart(2, "0")},`);
    expect(manifest.files.find((f) => f.name === CONFIG_CSV)?.rows).toBe(edits);
    expect(manifest.files.find((f) => f.name === EXPERIMENT_CSV)?.rows).toBe(
      (experiments * (experiments + 1)) / 2,
    );
  });

  it("stays complete in the HTML, rendered from the complete document", async () => {
    const configs = CAP + 3;
    const { md, complete, html } = await june(history(configs, 0));
    expect(names(section(complete, "Config edits per config"))).toHaveLength(configs);
    expect(complete).not.toContain("configs shown");
    for (let i = 0; i < configs; i++) expect(html).toContain(`gate_<wbr>${String(i).padStart(2, "0")}</td>`);
    expect(html).not.toContain("configs shown");
    // The capped Markdown is the complete document but for the capped table and its notes.
    const outside = (doc: string) => doc.replace(section(doc, "Config edits per config"), "");
    expect(outside(md)).toBe(outside(complete));
  });

  it("points at the query when the report set has no CSV", async () => {
    const { md } = await june(history(CAP + 1, 0), ["md"]);
    expect(section(md, "Config edits per config")).toContain(
      `every change of all ${CAP + 1} is a row of the second query below (this report set has no CSV).`,
    );
  });
});

describe("a table within its cap", () => {
  it("is the complete document's, without a note", async () => {
    const { md, complete } = await june(history(CAP, CAP));
    expect(names(section(md, "Config edits per config"))).toHaveLength(CAP);
    expect(names(section(md, "Experiment state changes per experiment"))).toHaveLength(CAP);
    expect(md).not.toContain("shown**");
    expect(md).not.toContain("not shown");
    expect(md).toBe(complete);
  });
});

describe("the entity-history tables past their caps", () => {
  it("show the most recent before → after and the most changed experiments' timelines, saying so", async () => {
    const versions = MARKDOWN_CAPS.configEditVersions + 4;
    const at = (i: number) => Date.UTC(2024, 5, 2, 10) + i * 3_600_000;
    const edits = Array.from({ length: versions }, (_, i) =>
      makeRecord({
        at: at(i),
        name: "pricing_v2",
        actionType: "config_default_value_update",
        updatedByUserID: "aliceUserId000000001",
      }),
    );
    const store = openStore(":memory:");
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-caps-entities-"));
    try {
      insertSyncedRecords(store, [...history(0, CAP + 2), ...edits]);
      const ctx = { runId: null, now: Date.UTC(2024, 6, 1) };
      const version = (v: number) => ({
        configId: "pricingV2Id",
        version: v,
        lastModifiedTime: at(v - 1) + 400,
        lastModifierId: "aliceUserId000000001",
        lastModifierName: null,
        raw: { id: "pricingV2Id", name: "pricing_v2", version: v, defaultValue: { limit: v } },
      });
      await storeConfigVersions(
        store,
        "pricing_v2",
        Array.from({ length: versions }, (_, i) => version(i + 1)),
        ctx,
      );
      await recordEntityFetch(
        store,
        { kind: "config_versions", key: "pricing_v2", outcome: "ok", items: versions, invalid: 0 },
        ctx,
      );
      await linkAndDiffConfig(store, "pricing_v2");
      await writeReports({ store, from: "2024-06-01", to: "2024-06-30", outDir, generatedAt: 0 });
      const md = readFileSync(join(outDir, "compliance_2024-06-01_2024-06-30.md"), "utf8");

      const beforeAfter = section(md, "Config edits: before and after, from the stored versions");
      const cap = MARKDOWN_CAPS.configEditVersions;
      expect(beforeAfter).toContain(
        `**${cap} of ${versions} edits shown**: the most recent. The query below lists every one with what ` +
          `its version changed; each edit is a row of \`${CONFIG_CSV}\`.`,
      );
      expect(beforeAfter).toContain("… and 4 earlier edits, not shown: the query below lists them.");
      const rows = beforeAfter.split("\n").filter((l) => l.startsWith("| 2024-"));
      expect(rows).toHaveLength(cap);
      // The most recent, in time order: versions 5 to 34 (version 1 has no version before it).
      expect(rows[0]).toContain("| 5 | defaultValue $.limit: 4 → 5 |");
      expect(rows.at(-1)).toContain(`| ${versions} | defaultValue $.limit: ${versions - 1} → ${versions} |`);

      const timelines = section(md, "Experiment timelines and current state");
      expect(names(timelines)).toEqual(
        Array.from({ length: CAP }, (_, k) => `exp\\_${String(CAP + 1 - k).padStart(2, "0")}`),
      );
      expect(timelines).toContain(
        `**${CAP} of ${CAP + 2} experiments shown**: those with the most state changes`,
      );
      expect(timelines).toContain(
        `… and 2 more experiments, not shown: every state change of each is in \`${EXPERIMENT_CSV}\`.`,
      );
    } finally {
      store.close();
    }
  });
});
