// The coverage write reads the coverage table once: it checks the rows present against meta's digest and
// folds the rows it writes into them (src/digests.ts foldCoverageRows) instead of reading and hashing
// every row again. The digest it stores must still be the full recount's, in byte order too (filter keys
// past ASCII), on both engines.
import { afterEach, describe, expect, it, vi } from "vitest";
import { type CoverageRow, EMPTY_COVERAGE_DIGEST, foldCoverageRow } from "../../src/digests.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { COVERAGE_DIGEST_KEY, COVERAGE_ROWS, updateQuarantineDigestIn } from "../../src/store/digests.ts";
import { inTransaction, queriesOf } from "../../src/store/query.ts";
import {
  type CoverageDay,
  openStore,
  readMetaValue,
  recordCoverage,
  type Store,
} from "../../src/store/syncStore.ts";
import { addDays } from "../../src/sync/days.ts";
import { freshDatabase, recordStatements } from "../pg/cluster.ts";

const open: Store[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

async function storeOf(engine: "sqlite" | "postgres"): Promise<Store> {
  const store = await openStore(engine === "sqlite" ? ":memory:" : await freshDatabase("coverage_digest"));
  open.push(store);
  // Both digests, as a store's first batch writes them.
  await inTransaction(store, (q) => updateQuarantineDigestIn(q));
  return store;
}

const days = (from: string, n: number, total: number): CoverageDay[] =>
  Array.from({ length: n }, (_, i) => ({
    day: addDays(from, i),
    serverTotal: total + i,
    localCount: total,
    quarantinedCount: i % 2,
    dayClosed: i % 3 !== 0,
  }));

/** The digest stored and the one a full recount of the rows makes. */
async function digests(store: Store) {
  const q = await queriesOf(store);
  const recount = (await q.all<CoverageRow>(COVERAGE_ROWS)).reduce(foldCoverageRow, EMPTY_COVERAGE_DIGEST);
  return { stored: JSON.parse((await readMetaValue(store, COVERAGE_DIGEST_KEY)) ?? "null"), recount };
}

describe.each(["sqlite", "postgres"] as const)("the coverage digest on %s", (engine) => {
  it("is the full recount's after every write: windows newest first, days rewritten, other filter sets", async () => {
    const store = await storeOf(engine);
    // A backfill's windows, newest first: each write goes before the rows present.
    for (let w = 3; w >= 0; w -= 1)
      await recordCoverage(store, "all", days(addDays("2024-01-01", 30 * w), 30, 5), 1, 1_000);
    // Days rewritten in the middle and at the end (one listed twice: its last values), new ones after them.
    const again = [...days("2024-02-10", 5, 9), ...days("2024-04-20", 20, 9)];
    await recordCoverage(store, "all", [...again, { ...again[3]!, serverTotal: 77 }], 2, 2_000);
    // Filter keys sort in byte order: U+E000 after U+10000 there, before it in JS's UTF-16 order.
    for (const key of ["\u{E000}", "\u{10000}", "a,b", "all"])
      await recordCoverage(store, key, days("2024-03-01", 3, 1), 3, 3_000);
    await recordCoverage(store, "all", [], 4, 4_000);
    const { stored, recount } = await digests(store);
    expect(recount.rows).toBe(120 + 10 + 9);
    expect(stored).toEqual(recount);
  });

  it("reads the coverage table once per write", async () => {
    const store = await storeOf(engine);
    await recordCoverage(store, "all", days("2024-01-01", 20, 5), 1, 1_000);
    const read = await statementsDuring(store, () =>
      recordCoverage(store, "all", days("2023-12-01", 31, 5), 2, 2_000),
    );
    expect(read.filter((text) => /^SELECT\b[\s\S]*\bFROM coverage\b/.test(text))).toHaveLength(1);
    const { stored, recount } = await digests(store);
    expect(stored).toEqual(recount);
  });
});

/** The texts of the statements `store` ran during `work`. */
async function statementsDuring(store: Store, work: () => Promise<void>): Promise<string[]> {
  if (store.engine === "postgres") {
    const { statements, stop } = recordStatements();
    try {
      await work();
    } finally {
      stop();
    }
    return statements;
  }
  // better-sqlite3 prepares each text once (src/store/query.ts): count the runs of its statements.
  const prototype = Object.getPrototypeOf(sqliteOf(store).prepare("SELECT 1"));
  const texts: string[] = [];
  const spies = (["all", "get", "run"] as const).map((method) => {
    const original = prototype[method];
    return vi.spyOn(prototype, method).mockImplementation(function (this: { source: string }, ...args) {
      texts.push(this.source);
      return original.apply(this, args);
    });
  });
  try {
    await work();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return texts;
}
