// "Changes with no approved review before them": an approval counts only for its own kind of entity
// and covers only the next change of that entity (review item 7).
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { writeReports } from "../../src/report/writeReports.ts";
import { openStore } from "../../src/store/open.ts";
import { insertRecords, makeRecord } from "./fixtures.ts";

const at = (d: number, h: number) => Date.UTC(2024, 5, d, h);

async function unreviewedSection(records: ReturnType<typeof makeRecord>[]): Promise<string> {
  const store = openStore(":memory:");
  try {
    insertRecords(store, records);
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-unreviewed-"));
    await writeReports({
      store,
      from: "2024-06-01",
      to: "2024-06-30",
      outDir,
      formats: ["md"],
      generatedAt: 0,
    });
    const md = readFileSync(join(outDir, "compliance_2024-06-01_2024-06-30.md"), "utf8");
    const start = md.indexOf("### Changes with no approved review before them");
    return md.slice(start, md.indexOf("<details>", start));
  } finally {
    store.close();
  }
}

it("one approval covers the next change only; the second change is listed", async () => {
  const section = await unreviewedSection([
    makeRecord({ id: "A1", at: at(3, 9), name: "checkout", actionType: "experiment_review_accept" }),
    makeRecord({ id: "C1", at: at(3, 10), name: "checkout", actionType: "experiment_start" }),
    makeRecord({ id: "C2", at: at(5, 10), name: "checkout", actionType: "experiment_pause_assignment" }),
  ]);
  expect(section).not.toContain("experiment\\_start");
  expect(section).toContain("| checkout | experiment\\_pause\\_assignment |");
});

it("an approval of another kind of entity with the same name does not count", async () => {
  const section = await unreviewedSection([
    // A config review accepted for a config that happens to share the experiment's name.
    makeRecord({ id: "A1", at: at(3, 9), name: "pricing", actionType: "config_review_accept" }),
    makeRecord({ id: "C1", at: at(3, 10), name: "pricing", actionType: "experiment_start" }),
    // And the other way round: an experiment approval does not clear a gate edit.
    makeRecord({ id: "A2", at: at(4, 9), name: "banner", actionType: "experiment_review_accept" }),
    makeRecord({ id: "C2", at: at(4, 10), name: "banner", actionType: "gate_update" }),
    // The right kind does.
    makeRecord({ id: "A3", at: at(6, 9), name: "banner", actionType: "config_review_accept" }),
    makeRecord({ id: "C3", at: at(6, 10), name: "banner", actionType: "config_conditions_update" }),
  ]);
  expect(section).toContain("| pricing | experiment\\_start |");
  expect(section).toContain("| banner | gate\\_update |");
  expect(section).not.toContain("config\\_conditions\\_update");
});
