// A report reads the store and writes nothing to it (issue 14): no migration, no rule-diff backfill.
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeReports } from "../../src/report/writeReports.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore } from "../../src/store/open.ts";
import { buildScenarioStore, SCENARIO } from "./scenario.ts";

function filesOf(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir).sort())
    files[name] = createHash("sha256")
      .update(readFileSync(join(dir, name)))
      .digest("hex");
  return files;
}

describe("report and the store", () => {
  it("leaves the store byte for byte as it was, and computes no rule diff", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-report-readonly-"));
    const dbPath = join(dir, "store.db");
    // A store whose records have no rule diffs stored: the report must not add them.
    buildScenarioStore(dbPath).close();
    const before = filesOf(dir);
    const outDir = mkdtempSync(join(tmpdir(), "flagtrail-report-readonly-out-"));
    const result = await writeReports({ dbPath, ...SCENARIO, outDir });
    expect(result.counts.configEdits).toBe(5);
    // A read-only connection to a WAL store leaves an empty -wal and its index (-shm) behind, as
    // `status` and `sql` do; the database itself and its log hold not one byte more.
    const after = filesOf(dir);
    expect(after["store.db"]).toBe(before["store.db"]);
    expect(statSync(`${dbPath}-wal`, { throwIfNoEntry: false })?.size ?? 0).toBe(0);
    const store = openStore(dbPath, { readonly: true });
    try {
      expect(sqliteOf(store).prepare("SELECT count(*) FROM rule_diff_summaries").pluck().get()).toBe(0);
      expect(
        sqliteOf(store).prepare("SELECT count(*) FROM meta WHERE key LIKE 'rule_diffs%'").pluck().get(),
      ).toBe(0);
    } finally {
      store.close();
    }
  });

  it("refuses a store an older flagtrail wrote in one sentence, asking to run sync", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-report-old-"));
    const dbPath = join(dir, "old.db");
    const store = buildScenarioStore(dbPath);
    sqliteOf(store)
      .prepare(
        "DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)",
      )
      .run();
    store.close();
    await expect(writeReports({ dbPath, ...SCENARIO, outDir: join(dir, "out") })).rejects.toThrow(
      /^\S+old\.db was written by an older flagtrail; run `flagtrail sync` on it once to upgrade it\.$/,
    );
  });
});
