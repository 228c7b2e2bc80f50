// Store writes only tests make (fixtures built synchronously, a signature or coverage row written by
// hand, drizzle's query builder on a PostgreSQL store): the sync and the commands never call them.

import type Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/node-postgres";
import { diffRecordChanges, type RuleDiff } from "../../src/diff/rules.ts";
import { signChainHead } from "../../src/digests.ts";
import { type PgStore, pgConnectionOf, type Store } from "../../src/store/connection.ts";
import { writeCoverageRowsQuery } from "../../src/store/coverageState.ts";
import { CHAIN_HEAD_SIGNATURE_KEY } from "../../src/store/digests.ts";
import { writeMetaValueQuery } from "../../src/store/metaValues.ts";
import * as pgSchema from "../../src/store/pg/schema.ts";
import { type SQL, sql, sqliteQueriesNow, sqliteQueriesOn } from "../../src/store/query.ts";
import { insertRuleDiffRowsNow } from "../../src/store/ruleDiffs.ts";

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
  const now = sqliteQueriesNow(store);
  now.run(sql`DELETE FROM rule_changes WHERE audit_log_id = ${auditLogId}`);
  now.run(sql`DELETE FROM rule_diff_summaries WHERE audit_log_id = ${auditLogId}`);
  insertRuleDiffRowsNow(now, [{ id: auditLogId, diff }]);
  return diff;
}
