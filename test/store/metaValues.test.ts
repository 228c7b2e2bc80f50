// Meta values read by key prefix, one query text on both engines: the prefix is taken literally and
// case-sensitively on SQLite as on PostgreSQL (a LIKE pattern ignored ASCII case on SQLite only, and
// read `_` and `%` in the prefix as wildcards on both).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readPendingCoverageDays } from "../../src/store/coverageState.ts";
import { readMetaValue, readMetaValuesWithPrefix, writeMetaValue } from "../../src/store/metaValues.ts";
import { type AnyStore, openAnyStore } from "../../src/store/openAny.ts";
import { readStoredPlan, readStoredPlans } from "../../src/store/syncPlans.ts";
import { freshDatabase } from "../pg/cluster.ts";

const opened: AnyStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
});

const ENGINES = {
  sqlite: async () => join(mkdtempSync(join(tmpdir(), "flagtrail-meta-")), "store.db"),
  postgres: () => freshDatabase("meta"),
};

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])("meta values on %s", (engine) => {
  it("reads the keys that start with the prefix exactly, in byte order; writes replace", async () => {
    const store = await openAnyStore(await ENGINES[engine]());
    opened.push(store);
    for (const key of ["t_x:b", "t_x:a", "T_X:upper", "tax:wildcard", "t_x", "t_x:é"]) {
      await writeMetaValue(store, key, `v ${key}`, 1000);
    }
    await writeMetaValue(store, "t_x:a", "replaced", 2000);
    expect(await readMetaValue(store, "t_x:a")).toBe("replaced");
    expect(await readMetaValue(store, "absent")).toBeUndefined();
    const found = await readMetaValuesWithPrefix(store, "t_x:");
    expect([...found]).toEqual([
      ["t_x:a", "replaced"],
      ["t_x:b", "v t_x:b"],
      ["t_x:é", "v t_x:é"],
    ]);
  });

  // As the comments on them say: what this version cannot read is dropped (a plan re-planned, no day owed),
  // unreadable JSON included (it threw before, failing every sync and status of the store).
  it("reads a plan or owed days that are not JSON as none", async () => {
    const store = await openAnyStore(await ENGINES[engine]());
    opened.push(store);
    await writeMetaValue(store, "sync_plan:all", "{cut off", 1000);
    await writeMetaValue(store, "coverage_pending:all", '["2024-01-01"', 1000);
    expect(await readStoredPlan(store, "all")).toBeUndefined();
    expect(await readStoredPlans(store)).toEqual([]);
    expect(await readPendingCoverageDays(store, "all")).toEqual([]);
    await writeMetaValue(store, "coverage_pending:all", '["2024-01-01"]', 2000);
    expect(await readPendingCoverageDays(store, "all")).toEqual(["2024-01-01"]);
  });
});
