// Issue 26: `flagtrail action-types` lists the values --action-type accepts, with their category.
import { describe, expect, it } from "vitest";
import { CONFIG_EDITS, EXPERIMENT_STATE_CHANGES } from "../../src/api/actionCategories.ts";
import { AUDIT_ACTION_TYPES } from "../../src/api/actionTypes.ts";
import { actionTypeRows } from "../../src/commands/listActionTypes.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";

describe("flagtrail action-types", () => {
  it("lists every action type of the specification once, in its order, with its category", () => {
    const rows = actionTypeRows();
    expect(rows.map((r) => r.actionType)).toEqual([...AUDIT_ACTION_TYPES]);
    expect(rows.find((r) => r.actionType === "experiment_start")).toEqual({
      actionType: "experiment_start",
      category: "experiment_state_change",
      otherClass: null,
    });
    expect(rows.find((r) => r.actionType === "user_login")?.category).toBe("other");
    expect(rows.find((r) => r.actionType === "user_login")?.otherClass).toMatch(/^[a-z_]+$/);
  });

  it("prints a table (real CLI), --category narrows it, --format json prints the rows", async () => {
    const table = await runCli(["action-types", "--category", "config_edit"]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^action_type +category +class$/);
    expect(
      lines
        .slice(2)
        .map((l) => l.split(/ +/)[0])
        .sort(),
    ).toEqual([...CONFIG_EDITS].sort());
    expect(lines.slice(2).every((l) => / config_edit$/.test(l))).toBe(true);

    const json = await runCliInProcess([
      "action-types",
      "--format",
      "json",
      "--category",
      "experiment_state_change",
    ]);
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as { actionType: string; category: string }[];
    expect(rows.map((r) => r.actionType).sort()).toEqual([...EXPERIMENT_STATE_CHANGES].sort());

    const bad = await runCliInProcess(["action-types", "--category", "gates"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--category");
  });
});
