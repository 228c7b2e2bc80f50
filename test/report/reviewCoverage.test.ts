import { expect, it } from "vitest";
import { juneComplianceMarkdown, makeRecord, markdownSection } from "./fixtures.ts";

const at = (d: number, h: number) => Date.UTC(2024, 5, d, h);

async function unreviewedSection(records: ReturnType<typeof makeRecord>[]): Promise<string> {
  return markdownSection(
    await juneComplianceMarkdown(records),
    "Changes with no approved review before them",
  );
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
