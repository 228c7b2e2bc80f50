// Store writes only tests and the bench make (one page in its own transaction, a signature or coverage
// row written by hand, drizzle's query builder on a PostgreSQL store): the sync and the commands never
// call them.

import type Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/node-postgres";
import { DIFF_VERSION, diffRecordChanges, type RuleDiff } from "../../src/diff/rules.ts";
import {
  type CoverageRow,
  EMPTY_COVERAGE_DIGEST,
  EMPTY_QUARANTINE_DIGEST,
  foldCoverageRow,
  foldQuarantineRow,
  type QuarantineRow,
  signChainHead,
} from "../../src/digests.ts";
import {
  CHAIN_HEAD_HASH_KEY,
  CHAIN_HEAD_SEQ_KEY,
  type PageContext,
  type PageWriteResult,
} from "../../src/records/pageTally.ts";
import { prepareRecords } from "../../src/records/prepare.ts";
import { type PgStore, pgConnectionOf, type Store, sqliteOf } from "../../src/store/connection.ts";
import { writeCoverageRowsQuery } from "../../src/store/coverageState.ts";
import {
  CHAIN_HEAD_SIGNATURE_KEY,
  COVERAGE_DIGEST_KEY,
  COVERAGE_ROWS,
  QUARANTINE_COLUMNS,
  QUARANTINE_DIGEST_KEY,
  updateQuarantineDigestIn,
} from "../../src/store/digests.ts";
import { writeMetaValueQuery, writeMetaValuesQuery } from "../../src/store/metaValues.ts";
import * as pgSchema from "../../src/store/pg/schema.ts";
import {
  columnsOf,
  inTransaction,
  type Queries,
  type SQL,
  sql,
  sqliteQueriesOn,
} from "../../src/store/query.ts";
import { insertRuleDiffRows, ruleChangeColumns } from "../../src/store/ruleDiffs.ts";
import { TABLES } from "../../src/store/tables.ts";
import { type ChainHead, sqliteBatchWriter } from "../../src/store/writes.ts";

/** drizzle's query builder on a PostgreSQL store's pool. */
export const pgDrizzleOf = (store: PgStore) =>
  drizzle({ client: pgConnectionOf(store).pool, schema: pgSchema });

/** One coverage row's upsert. */
export function writeCoverageQuery(row: Parameters<typeof writeCoverageRowsQuery>[0][number]): SQL {
  return writeCoverageRowsQuery([row]);
}

/**
 * Signs the chain head into meta when a key is given (the sync's batch commit signs its own); returns
 * whether it signed.
 */
export function writeChainHeadSignature(sqlite: Database.Database, key: string | undefined): boolean {
  if (!key) return false;
  const now = sqliteQueriesOn(sqlite);
  const head = now.get<{ seq: number; chainHash: string }>(
    sql`SELECT seq, chain_hash AS "chainHash" FROM audit_logs ORDER BY seq DESC LIMIT 1`,
  );
  if (!head) return false;
  now.run(writeMetaValueQuery(CHAIN_HEAD_SIGNATURE_KEY, signChainHead(head, key), Date.now()));
  return true;
}

/**
 * Diffs `changes.rules` of one stored record and replaces whatever diff it had (twice stores the same
 * rows once); null, and nothing written, when the record has no rules.
 */
export function storeRuleDiffs(store: Store, auditLogId: string, changes: unknown): RuleDiff | null {
  const diff = diffRecordChanges(changes);
  if (diff === null) return null;
  const now = sqliteQueriesOn(sqliteOf(store));
  now.run(sql`DELETE FROM rule_changes WHERE audit_log_id = ${auditLogId}`);
  now.run(sql`DELETE FROM rule_diff_summaries WHERE audit_log_id = ${auditLogId}`);
  const rows = diff.changes.map((c) => [auditLogId, ...ruleChangeColumns(c)]);
  now.insertRows("rule_changes", columnsOf(TABLES.ruleChanges), rows);
  now.insertRows("rule_diff_summaries", columnsOf(TABLES.ruleDiffSummaries), [
    [auditLogId, diff.summary, DIFF_VERSION],
  ]);
  return diff;
}

/**
 * One page in its own transaction, written as the sync's batch commit writes it (syncBatch.ts) less the
 * windows and run counters. writePage's `also` runs in that transaction after the records: all commits
 * or none.
 */
export function createRecordWriter(store: Store) {
  const writer = sqliteBatchWriter(store);
  return {
    writePage: (
      records: readonly unknown[],
      context: PageContext,
      also?: (result: PageWriteResult, q: Queries) => void | Promise<void>,
    ): Promise<PageWriteResult> =>
      inTransaction(store, async (q) => {
        const now = context.now ?? Date.now();
        const prepared = prepareRecords(records);
        const tally = await writer.storePage(prepared, { ...context, now });
        if (tally.result.quarantined > 0) await updateQuarantineDigestIn(q);
        if (tally.inserted.length > 0) {
          const { seq, hash } = tally.head;
          await q.run(
            writeMetaValuesQuery(
              [
                [CHAIN_HEAD_SEQ_KEY, String(seq)],
                [CHAIN_HEAD_HASH_KEY, hash],
              ],
              now,
            ),
          );
          await insertRuleDiffRows(q, tally.inserted);
        }
        await also?.(tally.result, q);
        return tally.result;
      }),
    /** GENESIS at seq 0 on an empty store. */
    chainHead: (): ChainHead => writer.heads().after,
  };
}

/** Both digests recounted from every row, as every sync batch leaves them; synchronous, for fixtures. */
export function writeDigests(sqlite: Database.Database): void {
  const now = sqliteQueriesOn(sqlite);
  const quarantine = now
    .all<QuarantineRow>(sql`SELECT ${sql.raw(QUARANTINE_COLUMNS)} FROM quarantine ORDER BY id`)
    .reduce(foldQuarantineRow, EMPTY_QUARANTINE_DIGEST);
  const coverage = now.all<CoverageRow>(COVERAGE_ROWS).reduce(foldCoverageRow, EMPTY_COVERAGE_DIGEST);
  now.run(writeMetaValueQuery(QUARANTINE_DIGEST_KEY, JSON.stringify(quarantine), Date.now()));
  now.run(writeMetaValueQuery(COVERAGE_DIGEST_KEY, JSON.stringify(coverage), Date.now()));
}
