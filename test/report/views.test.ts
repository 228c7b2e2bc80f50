import { afterEach, describe, expect, it } from "vitest";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { storeRuleDiffs } from "../helpers/storeFixtures.ts";
import { exampleRule, insertRecords, makeRecord } from "./fixtures.ts";

const T0 = Date.UTC(2022, 8, 26, 21, 25, 18);
let store: Store;
afterEach(() => store?.close());

function seed(): void {
  store = openStore(":memory:");
  const gate = makeRecord({
    id: "25KPZcLjTY7AS1uZdBolPZ",
    at: T0 + 3000,
    name: "test_gate_1",
    changeLog: "Created Gate",
    actionType: "gate_create",
    changes: {
      rules: {
        old: [exampleRule({ enabledEnvironments: ["development", "staging"] })],
        new: [exampleRule()],
      },
    },
  });
  insertRecords(store, [
    gate,
    makeRecord({
      id: "19LZJaPtCM4GT1sUbWlqVC",
      at: T0,
      name: "checkout_flow",
      changeLog: "Started experiment",
      actionType: "experiment_start",
      updatedBy: "John Doe",
    }),
    makeRecord({ id: "76LGVrItCR9WE1iDfNmpHT", at: T0, name: "dash", actionType: "create_dashboard" }),
    makeRecord({ id: "99LGVrItCR9WE1iDfNmpHT", at: T0, name: "future", actionType: "not_in_the_spec" }),
  ]);
  storeRuleDiffs(store, gate.id, gate.changes);
}

describe("views", () => {
  it("config_edits holds config edits with their rule-diff summary", () => {
    seed();
    expect(
      sqliteOf(store)
        .prepare("SELECT id, name, action_type, category, rule_diff_summary FROM config_edits")
        .all(),
    ).toEqual([
      {
        id: "25KPZcLjTY7AS1uZdBolPZ",
        name: "test_gate_1",
        action_type: "gate_create",
        category: "config_edit",
        rule_diff_summary: 'rule "test": environments: +production',
      },
    ]);
  });

  it("experiment_state_changes holds experiment state changes only", () => {
    seed();
    const rows = sqliteOf(store)
      .prepare(
        "SELECT id, occurred_at, updated_by, change_log, rule_diff_summary FROM experiment_state_changes",
      )
      .all();
    expect(rows).toEqual([
      {
        id: "19LZJaPtCM4GT1sUbWlqVC",
        occurred_at: T0,
        updated_by: "John Doe",
        change_log: "Started experiment",
        rule_diff_summary: null,
      },
    ]);
  });
});

describe("full-text index", () => {
  const search = (q: string) =>
    sqliteOf(store)
      .prepare(
        "SELECT a.id FROM audit_logs_fts f JOIN audit_logs a ON a.seq = f.rowid WHERE audit_logs_fts MATCH ? ORDER BY a.seq",
      )
      .pluck()
      .all(q);

  it("finds records by name, change log and updater as they are inserted", () => {
    seed();
    expect(search("checkout_flow")).toEqual(["19LZJaPtCM4GT1sUbWlqVC"]);
    expect(search("change_log: gate")).toEqual(["25KPZcLjTY7AS1uZdBolPZ"]);
    expect(search('updated_by: "john doe"')).toEqual(["19LZJaPtCM4GT1sUbWlqVC"]);
  });

  it("forgets deleted records and follows updates", () => {
    seed();
    sqliteOf(store).prepare("DELETE FROM audit_logs WHERE id = ?").run("76LGVrItCR9WE1iDfNmpHT");
    expect(search("dash")).toEqual([]);
    sqliteOf(store)
      .prepare("UPDATE audit_logs SET raw_data = json_set(raw_data, '$.name', 'renamed_flow') WHERE id = ?")
      .run("19LZJaPtCM4GT1sUbWlqVC");
    expect(search("checkout_flow")).toEqual([]);
    expect(search("renamed_flow")).toEqual(["19LZJaPtCM4GT1sUbWlqVC"]);
    expect(
      sqliteOf(store).prepare("INSERT INTO audit_logs_fts (audit_logs_fts) VALUES ('integrity-check')").run(),
    ).toBeTruthy();
  });
});
