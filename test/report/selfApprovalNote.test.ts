// The report's "Reviews approved by their own author" and a no-self-approval control count different
// things (the control also finds changes made by the person who approved their review): with such a
// control in the config, the section says so and splits the control's count into the two.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseControlsConfig } from "../../src/controls/config.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { markdownSection } from "./fixtures.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

async function compliance(controls: unknown[]): Promise<string> {
  const store = buildScenarioStore(":memory:", { ruleDiffs: true });
  const outDir = mkdtempSync(join(tmpdir(), "flagtrail-self-approval-note-"));
  try {
    const config = parseControlsConfig(JSON.stringify({ controls }), "test.json");
    const result = await writeReports({
      store,
      ...SCENARIO,
      outDir,
      formats: ["md"],
      controls: config.controls,
      generatedAt: GENERATED_AT,
    });
    return readFileSync(result.files.find((f) => f.name.endsWith(".md"))!.path, "utf8");
  } finally {
    store.close();
  }
}

describe("self-approvals in the report beside a no-self-approval control", () => {
  it("splits the control's count into the approvals listed here and the approvers' changes", async () => {
    const md = await compliance([{ id: "sa", kind: "no-self-approval", severity: "high" }]);
    const section = markdownSection(md, "Reviews approved by their own author");
    expect(section).toContain(
      "The config's no-self-approval control counts more than this list: the control sa has 2 findings: " +
        "1 approval by the requester (these, within its scope) and 1 change made by the person who " +
        "approved the review before (the entity's latest approval within 30 days).",
    );
    // The control's own row in the Controls section: the same 2.
    expect(md).toMatch(/\| sa \| no-self-approval \| high \| — \| 2 \| 0 \| 2 \|/);
  });

  it("says nothing of controls when the config has no such control", async () => {
    const md = await compliance([{ id: "rr", kind: "review-required", severity: "high" }]);
    expect(md).not.toContain("no-self-approval control");
  });
});
