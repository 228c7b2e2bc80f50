// A store written the way the sync writes it: records and quarantined records through the real page
// writer, coverage rows through the real coverage writer, and the digests and head signature updated in
// the same transactions, as src/store/digests.ts asks of the writer.
import { sqliteOf } from "../../src/store/connection.ts";
import { updateCoverageDigestIn, updateQuarantineDigestIn } from "../../src/store/digests.ts";
import type { Store } from "../../src/store/open.ts";
import { inTransaction } from "../../src/store/query.ts";
import { createRecordWriter, writeChainHeadSignature, writeCoverageQuery } from "../helpers/storeFixtures.ts";
import { makeRecord } from "../report/fixtures.ts";

export const KEY = "test-signing-key";
const DAY_MS = 86_400_000;
const START = Date.UTC(2024, 2, 1, 12);

let next = 0;

/** `count` valid records one a day from 1 March 2024 and `bad` quarantined ones, in one page. */
export async function writePage(
  store: Store,
  count: number,
  bad = 0,
  key: string | undefined = KEY,
): Promise<void> {
  const records: unknown[] = [];
  for (let i = 0; i < count; i += 1) {
    next += 1;
    records.push(
      makeRecord({
        id: `V${String(next).padStart(21, "0")}`,
        at: START + (next % 20) * DAY_MS,
        actionType: "gate_update",
        name: `gate_${next}`,
      }),
    );
  }
  for (let i = 0; i < bad; i += 1) {
    next += 1;
    // No name, no actionType: fails validation, goes to quarantine.
    records.push({ id: `Q${String(next).padStart(21, "0")}`, date: "Fri Mar 01 2024", time: 7 });
  }
  await createRecordWriter(store).writePage(
    records,
    { syncRunId: null, requestPath: "/test" },
    async (_, q) => {
      await updateQuarantineDigestIn(q);
      writeChainHeadSignature(sqliteOf(store), key);
    },
  );
}

/** Coverage rows for the first `days` days of March 2024, in one transaction with their digest. */
export async function writeCoverageDays(store: Store, days: number): Promise<void> {
  await inTransaction(store, async (q) => {
    for (let d = 0; d < days; d += 1) {
      const day = new Date(START + d * DAY_MS).toISOString().slice(0, 10);
      await q.run(
        writeCoverageQuery({
          filterKey: "all",
          day,
          serverTotal: 5,
          localCount: 5,
          quarantinedCount: 0,
          dayClosed: true,
          runId: 1,
          now: START + 40 * DAY_MS,
        }),
      );
    }
    await updateCoverageDigestIn(q);
  });
}
