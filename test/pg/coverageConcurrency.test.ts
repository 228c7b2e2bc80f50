// The sync checks coverage ranges several at once (--concurrency, 4 by default), and each range's days are
// recorded in a write transaction of its own: on PostgreSQL these overlap (READ COMMITTED, a session each).
// The transaction checks the rows present against meta's digest before writing them (src/chainChecks.ts),
// then rehashes every row: another range committing between those reads is the sync's own write, not an
// edit, and must neither be refused nor be left out of the digest that is stored last.
import { afterEach, describe, expect, it } from "vitest";
import { updateQuarantineDigestIn } from "../../src/store/digests.ts";
import { inTransaction } from "../../src/store/query.ts";
import { type CoverageDay, openStore, recordCoverage, type Store } from "../../src/store/syncStore.ts";
import { addDays } from "../../src/sync/days.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { freshDatabase } from "./cluster.ts";

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const day = (i: number): CoverageDay => ({
  day: addDays("2023-01-01", i),
  serverTotal: 0,
  localCount: 0,
  quarantinedCount: 0,
  dayClosed: true,
});

describe("coverage written by overlapping ranges on PostgreSQL", () => {
  it("is neither refused nor left out of the digest", async () => {
    const url = await freshDatabase("coverage_concurrency");
    store = await openStore(url);
    // Both digests, as a store's first batch writes them.
    await inTransaction(store, (q) => updateQuarantineDigestIn(q));
    await recordCoverage(store, "f", [day(0)], 1, 1_000);
    const ranges = Array.from({ length: 40 }, (_, i) => [day(2 * i + 1), day(2 * i + 2)]);
    const s = store;
    const outcomes = await Promise.allSettled(ranges.map((days) => recordCoverage(s, "f", days, 1, 1_000)));
    const refused = outcomes.flatMap((o) => (o.status === "rejected" ? [String(o.reason)] : []));
    expect(refused).toEqual([]);
    await store.close();
    store = undefined;
    const verify = await runCliInProcess(["verify", "--db", url]);
    expect(verify.stderr).toBe("");
    expect(verify.code).toBe(0);
  });
});
