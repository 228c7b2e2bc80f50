// The one place where other subsystems react to newly stored audit records. It runs INSIDE the page's
// transaction (same connection), so whatever it writes commits or rolls back with the records.
// Rule diffing hooks in here: for each record, storeRuleDiffs(store, record.id, record.changes).
import type { AuditLogRecord } from "../api/schemas.ts";
import type { Store } from "./open.ts";

export interface InsertedRecord {
  id: string;
  /** The validated record (unknown fields kept). */
  record: AuditLogRecord;
  seq: number;
}

/** Called once per page with the records that were new to the store (not duplicates or revisions). */
export function onRecordsInserted(_store: Store, _records: readonly InsertedRecord[]): void {
  // Intentionally empty until rule diffing lands; keep it synchronous (better-sqlite3 transaction).
}
