// The sync's write path on PostgreSQL (src/store/syncBatch.ts on SQLite): several pages in ONE
// transaction with everything they advance — each window's next page, the plan's head, the run's
// counters, the rule-diff mark, the chain head's signature and the quarantine digest. A kill loses at
// most the batch being written, and the stored progress then points at its first page again.
import { CHAIN_HEAD_SIGNATURE_KEY, signChainHead } from "../digests.ts";
import { addCounts } from "../records.ts";
import { advanceBackfillMarkIn } from "../ruleDiffs.ts";
import { type BatchResult, listedIds, planHeadOf, type SyncBatch } from "../syncBatch.ts";
import { advanceWindowIn, savePlanIn } from "../syncPlans.ts";
import { updateRunCountersIn } from "../syncRuns.ts";
import type { PgStore } from "./connection.ts";
import { notePgListedDay } from "./coverage.ts";
import { updatePgQuarantineDigest, writePgMeta } from "./quarantine.ts";
import { pgQueriesOn } from "./queries.ts";
import { pgRows } from "./session.ts";
import { inPgTransaction } from "./transaction.ts";
import { readPgChainHead, storePgPrepared } from "./writes.ts";

export async function commitPgSyncBatch(store: PgStore, batch: SyncBatch): Promise<BatchResult> {
  return inPgTransaction(store, async (client) => {
    const q = pgQueriesOn(client, store);
    const counters = { ...batch.counters };
    const warningMessages: string[] = [];
    let plan = batch.plan;
    let head = await readPgChainHead(client);
    const headBefore = head.seq;
    for (const page of batch.pages) {
      const stored = await storePgPrepared(
        client,
        page.prepared,
        { syncRunId: batch.runId, requestPath: page.requestPath, dayRange: page.dayRange, now: batch.now },
        head,
      );
      const { result } = stored;
      head = stored.head;
      addCounts(counters, result);
      if (page.listedDay !== undefined) await notePgListedDay(client, listedIds(result), page.listedDay);
      warningMessages.push(...result.warningMessages);
      if (plan && page.window) {
        await advanceWindowIn(q, plan.filterKey, page.window, {
          nextPage: page.window.nextPage,
          done: page.window.done,
          runId: batch.runId,
          now: batch.now,
        });
      }
      const headId = planHeadOf(plan, page, result);
      if (plan && headId !== undefined) {
        const [row] =
          headId === null
            ? []
            : await pgRows<{ occurred_at: number | null }>(
                client,
                "SELECT occurred_at FROM audit_logs WHERE id = $1",
                [headId],
              );
        plan = { ...plan, headFetched: true, headId, headOccurredAt: row?.occurred_at ?? null };
        await savePlanIn(q, plan, batch.now);
      }
    }
    await advanceBackfillMarkIn(q, headBefore, head.seq);
    // Signs the head (HMAC) when a key is given, as SQLite's writeChainHeadSignature; the key is never stored.
    if (batch.signingKey && head.seq > 0) {
      await writePgMeta(
        client,
        CHAIN_HEAD_SIGNATURE_KEY,
        signChainHead({ seq: head.seq, chainHash: head.hash }, batch.signingKey),
      );
    }
    // Created on the first batch even with no quarantined record, so verify covers the table from the start.
    await updatePgQuarantineDigest(client);
    await updateRunCountersIn(q, batch.runId, counters);
    return { counters, plan, warningMessages };
  });
}
