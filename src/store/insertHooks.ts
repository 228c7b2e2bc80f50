// The one place where other subsystems react to newly stored audit records. It runs INSIDE the write
// transaction (same connection), so whatever it writes commits or rolls back with the records.
import type Database from "better-sqlite3";
import type { AuditLogRecord } from "../api/schemas.ts";
import { insertFreshRuleDiffs } from "./ruleDiffs.ts";

export interface InsertedRecord {
  id: string;
  /** The validated record (unknown fields kept). */
  record: AuditLogRecord;
  seq: number;
}

/** Called once per page with the records that were new to the store (not duplicates or revisions). */
export function onRecordsInserted(sqlite: Database.Database, records: readonly InsertedRecord[]): void {
  for (const { id, record } of records) {
    // Most records have `changes: {}`; only rule edits carry changes.rules to diff.
    if (record.changes && "rules" in record.changes) insertFreshRuleDiffs(sqlite, id, record.changes);
  }
}
