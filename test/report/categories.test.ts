import { describe, expect, it } from "vitest";
import {
  ACTION_TYPE_CATEGORIES,
  CONFIG_EDITS,
  EXPERIMENT_STATE_CHANGES,
  OTHER_ACTION_TYPES,
} from "../../src/api/actionCategories.ts";
import { AUDIT_ACTION_TYPES } from "../../src/api/actionTypes.ts";
import { writeActionTypeCategories } from "../../src/store/categories.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";

describe("action type categories", () => {
  it("assigns every action type of the specification exactly once", () => {
    const listed = [
      ...EXPERIMENT_STATE_CHANGES,
      ...CONFIG_EDITS,
      ...Object.values(OTHER_ACTION_TYPES).flatMap((group) => group.actionTypes),
    ];
    const counts = new Map<string, number>();
    for (const type of listed) counts.set(type, (counts.get(type) ?? 0) + 1);
    expect([...counts].filter(([, n]) => n !== 1)).toEqual([]);
    expect([...counts.keys()].sort()).toEqual([...AUDIT_ACTION_TYPES].sort());
    for (const group of Object.values(OTHER_ACTION_TYPES)) expect(group.reason.length).toBeGreaterThan(10);
  });

  it("puts the issue's named types where the issue says", () => {
    for (const type of [
      "experiment_start",
      "experiment_abandon",
      "archive_experiment",
      "experiment_restart",
    ]) {
      expect(ACTION_TYPE_CATEGORIES.get(type)).toBe("experiment_state_change");
    }
    for (const type of [
      "gate_create",
      "config_resalt",
      "config_revert",
      "config_review_accept",
      "config_add_tag",
    ]) {
      expect(ACTION_TYPE_CATEGORIES.get(type)).toBe("config_edit");
    }
    expect(OTHER_ACTION_TYPES.review_workflow.actionTypes).toContain("experiment_review_accept");
    expect(
      Object.values(OTHER_ACTION_TYPES).some((g) =>
        (g.actionTypes as readonly string[]).includes("gate_create"),
      ),
    ).toBe(false);
  });

  it("is written into action_type_categories at open, and rewritten when it differs", () => {
    const store = openStore(":memory:");
    const count = () => sqliteOf(store).prepare("SELECT count(*) FROM action_type_categories").pluck().get();
    expect(count()).toBe(AUDIT_ACTION_TYPES.length);
    expect(
      sqliteOf(store)
        .prepare("SELECT category FROM action_type_categories WHERE action_type = 'gate_update'")
        .pluck()
        .get(),
    ).toBe("config_edit");
    sqliteOf(store)
      .prepare("UPDATE action_type_categories SET category = 'x' WHERE action_type = 'gate_update'")
      .run();
    sqliteOf(store).prepare("INSERT INTO action_type_categories VALUES ('not_in_spec', 'config_edit')").run();
    writeActionTypeCategories(sqliteOf(store));
    expect(count()).toBe(AUDIT_ACTION_TYPES.length);
    expect(
      sqliteOf(store)
        .prepare("SELECT category FROM action_type_categories WHERE action_type = 'gate_update'")
        .pluck()
        .get(),
    ).toBe("config_edit");
    store.close();
  });
});
