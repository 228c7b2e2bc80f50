// The views' ISO-text UTC times (issue 26): the same text on both engines, and the epoch milliseconds
// beside it read as UTC. One history written to SQLite, copied into PostgreSQL.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";
import { insertRecords, makeRecord } from "../report/fixtures.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";
import { copyStore } from "./copyStore.ts";

const AT = [Date.UTC(2026, 9, 1, 0, 47, 43), Date.UTC(2024, 1, 29, 23, 59, 59)];
const QUERY = (view: string) => `SELECT id, occurred_at, occurred_at_iso FROM ${view} ORDER BY id`;

describe("ISO-text times in the views", () => {
  it("occurred_at_iso is occurred_at as UTC ISO-8601 text, the same on SQLite and PostgreSQL", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "flagtrail-iso-")), "store.db");
    const store = openStore(path);
    insertRecords(store, [
      makeRecord({ id: "exp1", at: AT[0]!, name: "e", actionType: "experiment_start" }),
      makeRecord({ id: "gate1", at: AT[1]!, name: "g", actionType: "gate_create" }),
    ]);
    const lite = {
      experiments: sqliteOf(store).prepare(QUERY("experiment_state_changes")).all(),
      configs: sqliteOf(store).prepare(QUERY("config_edits")).all(),
    };
    store.close();
    expect(lite.experiments).toEqual([
      { id: "exp1", occurred_at: AT[0], occurred_at_iso: "2026-10-01T00:47:43.000Z" },
    ]);
    expect(lite.configs).toEqual([
      { id: "gate1", occurred_at: AT[1], occurred_at_iso: "2024-02-29T23:59:59.000Z" },
    ]);

    const url = await freshDatabase("isotimes");
    await copyStore(path, url);
    const pg = {
      experiments: await queryOnce(url, QUERY("experiment_state_changes")),
      configs: await queryOnce(url, QUERY("config_edits")),
    };
    const asNumbers = (rows: readonly Record<string, unknown>[]) =>
      rows.map((r) => ({ ...r, occurred_at: Number(r.occurred_at) }));
    expect(asNumbers(pg.experiments)).toEqual(lite.experiments);
    expect(asNumbers(pg.configs)).toEqual(lite.configs);
  });
});
