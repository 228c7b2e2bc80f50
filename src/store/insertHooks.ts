// Where other subsystems react to newly stored records, inside the write transaction (commits with them).
import type Database from "better-sqlite3";
import type { InsertedRecord } from "../records/pageTally.ts";
import { sqliteQueriesOn } from "./query.ts";
import { insertRuleDiffRowsNow, type RecordDiff } from "./ruleDiffs.ts";

/** Called once per page with the records that were new to the store (not duplicates or revisions). */
export function onRecordsInserted(sqlite: Database.Database, records: readonly InsertedRecord[]): void {
  const diffs = records.flatMap(({ id, diff }): RecordDiff[] => (diff === null ? [] : [{ id, diff }]));
  insertRuleDiffRowsNow(sqliteQueriesOn(sqlite), diffs);
}
