import { afterEach, describe, expect, it } from "vitest";
import { DIFF_VERSION } from "../../src/diff/rules.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { BACKFILL_MARK_KEY, backfillRuleDiffs } from "../../src/store/ruleDiffs.ts";
import { storeRuleDiffs } from "../helpers/storeFixtures.ts";
import { exampleRule, insertRecords, makeRecord } from "../report/fixtures.ts";

const T0 = Date.UTC(2022, 8, 26, 23, 46, 14);
let store: Store;
afterEach(() => store?.close());

function ruleRecord(id: string, percent: number) {
  return makeRecord({
    id,
    at: T0,
    name: "test_gate_1",
    actionType: "gate_update",
    changes: { rules: { old: [exampleRule()], new: [exampleRule({ percentagePass: percent })] } },
  });
}

function rows(id: string) {
  return sqliteOf(store)
    .prepare("SELECT rule_id, change, field, old_value, new_value FROM rule_changes WHERE audit_log_id = ?")
    .all(id);
}

describe("storeRuleDiffs", () => {
  it("stores rows and a summary once, however often it runs", () => {
    store = openStore(":memory:");
    const record = ruleRecord("25KPZcLjTY7AS1uZdBolPZ", 50);
    insertRecords(store, [record]);
    storeRuleDiffs(store, record.id, record.changes);
    storeRuleDiffs(store, record.id, JSON.stringify(record.changes));
    expect(rows(record.id)).toEqual([
      {
        rule_id: "BfGswoMDcsZ4y9Le1d9O",
        change: "modified",
        field: "percentagePass",
        old_value: "100",
        new_value: "50",
      },
    ]);
    expect(sqliteOf(store).prepare("SELECT * FROM rule_diff_summaries").all()).toEqual([
      { audit_log_id: record.id, summary: 'rule "test": pass 100% → 50%', diff_version: DIFF_VERSION },
    ]);
  });

  it("writes nothing for a record without rules", () => {
    store = openStore(":memory:");
    const record = makeRecord({ at: T0, name: "check_employee", actionType: "config_remove_tag" });
    insertRecords(store, [record]);
    expect(storeRuleDiffs(store, record.id, record.changes)).toBeNull();
    expect(sqliteOf(store).prepare("SELECT count(*) FROM rule_diff_summaries").pluck().get()).toBe(0);
  });
});

describe("backfillRuleDiffs", () => {
  it("diffs records without a summary or with an older diff version, and only those", async () => {
    store = openStore(":memory:");
    const fresh = ruleRecord("AAAAAAAAAAAAAAAAAAAAA1", 10);
    const stale = ruleRecord("AAAAAAAAAAAAAAAAAAAAA2", 20);
    const current = ruleRecord("AAAAAAAAAAAAAAAAAAAAA3", 30);
    const plain = makeRecord({ id: "AAAAAAAAAAAAAAAAAAAAA4", at: T0, name: "x", actionType: "gate_create" });
    const nullRules = makeRecord({
      id: "AAAAAAAAAAAAAAAAAAAAA5",
      at: T0,
      name: "x",
      actionType: "gate_update",
      changes: { rules: null },
    });
    insertRecords(store, [fresh, stale, current, plain, nullRules]);
    storeRuleDiffs(store, stale.id, stale.changes);
    storeRuleDiffs(store, current.id, current.changes);
    sqliteOf(store)
      .prepare("UPDATE rule_diff_summaries SET diff_version = ?, summary = 'old' WHERE audit_log_id = ?")
      .run(DIFF_VERSION - 1, stale.id);
    sqliteOf(store)
      .prepare("UPDATE rule_diff_summaries SET summary = 'kept' WHERE audit_log_id = ?")
      .run(current.id);

    expect(await backfillRuleDiffs(store)).toEqual({ diffed: 2, scanned: 5 });
    const summaries = sqliteOf(store)
      .prepare("SELECT audit_log_id, summary FROM rule_diff_summaries ORDER BY audit_log_id")
      .all();
    expect(summaries).toEqual([
      { audit_log_id: fresh.id, summary: 'rule "test": pass 100% → 10%' },
      { audit_log_id: stale.id, summary: 'rule "test": pass 100% → 20%' },
      { audit_log_id: current.id, summary: "kept" },
    ]);
    expect(rows(stale.id)).toHaveLength(1);
    // The mark: a second run looks at nothing, a record stored since is picked up, `full` rescans.
    expect(await backfillRuleDiffs(store)).toEqual({ diffed: 0, scanned: 0 });
    const later = ruleRecord("AAAAAAAAAAAAAAAAAAAAA6", 60);
    insertRecords(store, [later]);
    expect(await backfillRuleDiffs(store)).toEqual({ diffed: 1, scanned: 1 });
    sqliteOf(store).prepare("DELETE FROM rule_changes WHERE audit_log_id = ?").run(fresh.id);
    sqliteOf(store).prepare("DELETE FROM rule_diff_summaries WHERE audit_log_id = ?").run(fresh.id);
    expect(await backfillRuleDiffs(store)).toEqual({ diffed: 0, scanned: 0 });
    expect(await backfillRuleDiffs(store, { full: true })).toEqual({ diffed: 1, scanned: 6 });
    expect(rows(fresh.id)).toHaveLength(1);
  });

  it("works through more records than one batch", async () => {
    store = openStore(":memory:");
    const records = Array.from({ length: 1203 }, (_, i) =>
      ruleRecord(`B${String(i).padStart(21, "0")}`, i % 100),
    );
    insertRecords(store, records);
    expect(await backfillRuleDiffs(store, { batchSize: 500 })).toEqual({ diffed: 1203, scanned: 1203 });
    expect(
      JSON.parse(
        sqliteOf(store)
          .prepare("SELECT value FROM meta WHERE key = ?")
          .pluck()
          .get(BACKFILL_MARK_KEY) as string,
      ),
    ).toEqual({
      diffVersion: DIFF_VERSION,
      seq: 1203,
    });
    expect(sqliteOf(store).prepare("SELECT count(*) FROM rule_diff_summaries").pluck().get()).toBe(1203);
  });
});
