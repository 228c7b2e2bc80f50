// The one place where other subsystems react to newly stored audit records. It runs INSIDE the write
// transaction (same connection), so whatever it writes commits or rolls back with the records.
import type Database from "better-sqlite3";
import type { InsertedRecord } from "../records/pageTally.ts";
import { sqliteQueriesOn } from "./query.ts";
import { insertRuleDiffRowsNow, type RecordDiff } from "./ruleDiffs.ts";

/** Called once per page with the records that were new to the store (not duplicates or revisions). */
export function onRecordsInserted(sqlite: Database.Database, records: readonly InsertedRecord[]): void {
  const diffs = records.flatMap(({ id, diff }): RecordDiff[] => (diff === null ? [] : [{ id, diff }]));
  insertRuleDiffRowsNow(sqliteQueriesOn(sqlite), diffs);
}
