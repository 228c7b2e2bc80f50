import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recordHash } from "../../src/hash.ts";
// A fixed, small store for report, sql and verify tests: every report section has something in it.
// Period 2024-03-29..2024-04-01 in Europe/Berlin crosses the spring DST change (31 March).
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { writeDigests } from "../helpers/storeFixtures.ts";
import { exampleRule, insertRecords, insertSyncedRecords, makeRecord, type RawRecord } from "./fixtures.ts";

export const SCENARIO = { from: "2024-03-29", to: "2024-04-01", timeZone: "Europe/Berlin" } as const;
export const GENERATED_AT = Date.UTC(2024, 3, 2, 6, 0, 0);

const utc = (d: number, h: number, m = 0, s = 0) => Date.UTC(2024, 2, d, h, m, s);

const ALICE = {
  updatedBy: "Alice Admin",
  updatedByUserID: "aliceUserId000000001",
  modifierEmail: "alice@example.com",
};
const BOB = {
  updatedBy: "Bob Builder",
  updatedByUserID: "bobUserId00000000002",
  modifierEmail: "bob@example.com",
};
const MALLORY = {
  updatedBy: "=cmd|' /C calc'!A0",
  updatedByUserID: "malloryUserId0000003",
  modifierEmail: "@mallory@example.com",
};

export function scenarioRecords(): RawRecord[] {
  return [
    // Before the period: an approved review for checkout_flow.
    makeRecord({
      id: "S000000000000000000001",
      at: utc(28, 9),
      name: "checkout_flow",
      actionType: "experiment_review_create",
      changeLog: "Review requested",
      ...BOB,
    }),
    makeRecord({
      id: "S000000000000000000002",
      at: utc(28, 10),
      name: "checkout_flow",
      actionType: "experiment_review_accept",
      changeLog: "Review approved",
      ...ALICE,
    }),
    // In the period.
    makeRecord({
      id: "S000000000000000000003",
      at: utc(29, 8),
      name: "checkout_flow",
      actionType: "experiment_create",
      changeLog: "Created experiment",
      ...BOB,
    }),
    makeRecord({
      id: "S000000000000000000004",
      at: utc(29, 9, 30),
      name: "checkout_flow",
      actionType: "experiment_start",
      changeLog: "Started experiment",
      ...BOB,
    }),
    makeRecord({
      id: "S000000000000000000005",
      at: utc(29, 11),
      name: "test_gate_1",
      actionType: "gate_update",
      changeLog: "Updated Gate Rules",
      ...ALICE,
      changes: {
        rules: {
          old: [
            exampleRule({ groupName: "Beta users", percentagePass: 10, enabledEnvironments: ["staging"] }),
          ],
          new: [
            exampleRule({
              groupName: "Beta users",
              percentagePass: 50,
              conditionJSON: [
                { conditionType: 1, operator: 0, value: ["1"], extraConfig: {} },
                { conditionType: 1, operator: 0, value: ["ios"], extraConfig: {} },
              ],
              enabledEnvironments: ["staging", "production"],
            }),
          ],
        },
      },
    }),
    makeRecord({
      id: "S000000000000000000006",
      at: utc(30, 22, 30),
      name: "pricing `config` | v2\nsecond line",
      actionType: "config_default_value_update",
      changeLog: "+1 default <b>bold</b>",
      ...MALLORY,
      changes: {
        rules: {
          old: [exampleRule({ returnValueJSON: '{"color":"red"}' })],
          new: [exampleRule({ returnValueJSON: '{"color":"blue"}' })],
        },
      },
    }),
    // 01:30 UTC on 31 March is 03:30 CEST (after the DST change).
    makeRecord({
      id: "S000000000000000000007",
      at: utc(31, 1, 30),
      name: "pricing_v2",
      actionType: "config_review_create",
      changeLog: "Review requested",
      ...MALLORY,
    }),
    makeRecord({
      id: "S000000000000000000008",
      at: utc(31, 1, 45),
      name: "pricing_v2",
      actionType: "config_review_accept",
      changeLog: "Review approved",
      ...MALLORY,
    }),
    makeRecord({
      id: "S000000000000000000009",
      at: utc(31, 2),
      name: "pricing_v2",
      actionType: "config_conditions_update",
      changeLog: "Updated conditions",
      ...MALLORY,
    }),
    makeRecord({
      id: "S000000000000000000010",
      at: utc(31, 12),
      name: "checkout_flow",
      actionType: "experiment_review_create",
      changeLog: "Review requested",
      ...BOB,
    }),
    makeRecord({
      id: "S000000000000000000011",
      at: utc(31, 13),
      name: "checkout_flow",
      actionType: "experiment_review_reject",
      changeLog: "Needs a power analysis",
      ...ALICE,
    }),
    makeRecord({
      id: "S000000000000000000012",
      at: Date.UTC(2024, 3, 1, 7),
      name: "checkout_flow",
      actionType: "experiment_decision_make",
      changeLog: "Shipped test group",
      ...BOB,
    }),
    makeRecord({
      id: "S000000000000000000013",
      at: Date.UTC(2024, 3, 1, 8),
      name: "Sales dashboard",
      actionType: "create_dashboard",
      changeLog: "Created dashboard",
      ...ALICE,
    }),
    makeRecord({
      id: "S000000000000000000014",
      at: Date.UTC(2024, 3, 1, 9),
      name: "signup_flow",
      actionType: "experiment_abandon",
      changeLog: "Abandoned",
      ...ALICE,
    }),
    // 22:30 UTC on 1 April is 00:30 on 2 April in Berlin: outside the period.
    makeRecord({
      id: "S000000000000000000015",
      at: Date.UTC(2024, 3, 1, 22, 30),
      name: "late_gate",
      actionType: "gate_update",
      changeLog: "Too late",
      ...ALICE,
    }),
    // An approval 42 days before signup_flow's abandonment: older than the review window, so it does
    // not count. Stored last (as a backfill of older records would be); the chain does not mind.
    makeRecord({
      id: "S000000000000000000016",
      at: Date.UTC(2024, 1, 19, 9),
      name: "signup_flow",
      actionType: "experiment_review_accept",
      changeLog: "Review approved",
      ...BOB,
    }),
  ];
}

/**
 * Builds the scenario store at `path` (":memory:" for in-process tests). `ruleDiffs`: store each
 * record's rule diff with it, as the sync does (a report reads them and computes none); without, the
 * store is one written before rule diffs existed.
 */
export function buildScenarioStore(path = ":memory:", options: { ruleDiffs?: boolean } = {}): Store {
  const store = openStore(path);
  const records = scenarioRecords();
  (options.ruleDiffs ? insertSyncedRecords : insertRecords)(store, records, GENERATED_AT - 3_600_000);
  // A later version of record 13 under the same id: a mutation.
  const mutated = { ...records[12]!, changeLog: "Created dashboard (edited later)" };
  sqliteOf(store)
    .prepare("INSERT INTO audit_log_revisions (audit_log_id, raw, record_hash, seen_at) VALUES (?, ?, ?, ?)")
    .run(mutated.id, JSON.stringify(mutated), recordHash(mutated), GENERATED_AT - 1_800_000);
  const coverage = sqliteOf(store).prepare(
    "INSERT INTO coverage (filter_key, day, server_total, local_count, checked_at, day_closed) VALUES (?, ?, ?, ?, ?, 1)",
  );
  coverage.run("all", "2024-03-29", 3, 3, GENERATED_AT);
  coverage.run("all", "2024-03-30", 1, 1, GENERATED_AT);
  coverage.run("all", "2024-03-31", 7, 5, GENERATED_AT);
  // The digests every sync batch writes (verify treats a missing one as removed).
  writeDigests(sqliteOf(store));
  return store;
}

/**
 * The scenario store in a fresh temp directory, and the `report` arguments for the scenario's period over
 * it (with `--tz` when asked for): the setup every CLI report test starts from.
 */
export function scenarioOnDisk(
  prefix: string,
  options: { ruleDiffs?: boolean; tz?: boolean } = {},
): { dir: string; dbPath: string; reportArgs: string[] } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dbPath = join(dir, "store.db");
  buildScenarioStore(dbPath, { ruleDiffs: options.ruleDiffs ?? false }).close();
  const tz = options.tz ? ["--tz", SCENARIO.timeZone] : [];
  return {
    dir,
    dbPath,
    reportArgs: ["report", "--from", SCENARIO.from, "--to", SCENARIO.to, ...tz, "--db", dbPath],
  };
}
