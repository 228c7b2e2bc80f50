// The sync's write path on PostgreSQL (src/store/syncBatch.ts on SQLite): several pages in ONE
// transaction with everything they advance — each window's next page, the plan's head, the run's
// counters, the rule-diff mark, the chain head's signature and the quarantine digest. A kill loses at
// most the batch being written, and the stored progress then points at its first page again.
import { CHAIN_HEAD_SIGNATURE_KEY, signChainHead, updateQuarantineDigestIn } from "../digests.ts";
import { writeMetaValueQuery } from "../metaValues.ts";
import { type Queries, sql } from "../query.ts";
import { addCounts, type PageWriteResult } from "../records.ts";
import { advanceBackfillMarkIn } from "../ruleDiffs.ts";
import { type BatchResult, listedIds, planHeadOf, type SyncBatch } from "../syncBatch.ts";
import { advanceWindowIn, savePlanIn } from "../syncPlans.ts";
import { updateRunCountersIn } from "../syncRuns.ts";
import type { PgStore } from "./connection.ts";
import { inPgQueriesTransaction } from "./queries.ts";
import { PgBatchWriter } from "./writes.ts";

/**
 * The server listed these records under `day` (a single-day read): as SQLite's noteListedDay
 * (src/store/coverageCounts.ts), set-based.
 */
async function noteListedDay(q: Queries, ids: readonly string[], day: string): Promise<void> {
  if (ids.length === 0) return;
  // Once each: one statement may not upsert the same row twice.
  const unique = sql.param([...new Set(ids)]);
  await q.run(
    sql`INSERT INTO listed_days (audit_log_id, day)
     SELECT id, ${day} FROM audit_logs WHERE id = ANY(${unique}) AND server_day IS DISTINCT FROM ${day}
     ON CONFLICT (audit_log_id) DO UPDATE SET day = excluded.day`,
  );
  await q.run(
    sql`DELETE FROM listed_days l USING audit_logs a
     WHERE a.id = l.audit_log_id AND l.audit_log_id = ANY(${unique}) AND a.server_day IS NOT DISTINCT FROM ${day}`,
  );
}

export async function commitPgSyncBatch(store: PgStore, batch: SyncBatch): Promise<BatchResult> {
  return inPgQueriesTransaction(store, async (q) => {
    const counters = { ...batch.counters };
    const warningMessages: string[] = [];
    let plan = batch.plan;
    const writer = await PgBatchWriter.open(
      q,
      batch.pages.map((page) => page.prepared),
      batch.now,
    );
    const results: PageWriteResult[] = [];
    for (const page of batch.pages) {
      results.push(
        await writer.storePage(page.prepared, {
          syncRunId: batch.runId,
          requestPath: page.requestPath,
          dayRange: page.dayRange,
          now: batch.now,
        }),
      );
    }
    // The batch's records in at once; what follows reads them or references them.
    await writer.write();
    for (const [i, page] of batch.pages.entries()) {
      const result = results[i]!;
      addCounts(counters, result);
      if (page.listedDay !== undefined) await noteListedDay(q, listedIds(result), page.listedDay);
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
        const row =
          headId === null
            ? undefined
            : await q.get<{ occurred_at: number | null }>(
                sql`SELECT occurred_at FROM audit_logs WHERE id = ${headId}`,
              );
        plan = { ...plan, headFetched: true, headId, headOccurredAt: row?.occurred_at ?? null };
        await savePlanIn(q, plan, batch.now);
      }
    }
    const { before, after } = writer.seqs();
    await advanceBackfillMarkIn(q, before, after);
    // Signs the head (HMAC) when a key is given, as SQLite's writeChainHeadSignature; the key is never stored.
    if (batch.signingKey && after > 0) {
      const head = writer.chainHead();
      const signature = signChainHead({ seq: head.seq, chainHash: head.hash }, batch.signingKey);
      await q.run(writeMetaValueQuery(CHAIN_HEAD_SIGNATURE_KEY, signature, Date.now()));
    }
    // Created on the first batch even with no quarantined record, so verify covers the table from the
    // start; folds the batch's quarantined rows (once a batch, not once a page).
    await updateQuarantineDigestIn(q);
    await updateRunCountersIn(q, batch.runId, counters);
    return { counters, plan, warningMessages };
  });
}
