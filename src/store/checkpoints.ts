// Per filter set, the newest record seen: sent as latestID by the next incremental run.
import { sqliteOf } from "./connection.ts";
import type { Store } from "./open.ts";

// ---- checkpoints -----------------------------------------------------------------------------------

export interface Checkpoint {
  filterKey: string;
  latestId: string;
  latestOccurredAt: number | null;
  /** The checkpoint record's server day, when the record is stored and its date parsed. */
  serverDay: string | null;
  updatedAt: number;
}

export function readCheckpoint(store: Store, filterKey: string): Checkpoint | undefined {
  const row = sqliteOf(store)
    .prepare<
      [string],
      {
        filter_key: string;
        latest_id: string;
        latest_occurred_at: number | null;
        updated_at: number;
        server_day: string | null;
      }
    >(
      `SELECT c.filter_key, c.latest_id, c.latest_occurred_at, c.updated_at, a.server_day
       FROM checkpoints c LEFT JOIN audit_logs a ON a.id = c.latest_id WHERE c.filter_key = ?`,
    )
    .get(filterKey);
  if (!row) return undefined;
  return {
    filterKey: row.filter_key,
    latestId: row.latest_id,
    latestOccurredAt: row.latest_occurred_at,
    serverDay: row.server_day,
    updatedAt: row.updated_at,
  };
}

export function listCheckpoints(store: Store): Checkpoint[] {
  const keys = sqliteOf(store)
    .prepare<[], string>("SELECT filter_key FROM checkpoints ORDER BY filter_key")
    .pluck();
  return keys
    .all()
    .map((key) => readCheckpoint(store, key))
    .filter((c): c is Checkpoint => c !== undefined);
}

export function writeCheckpoint(
  store: Store,
  checkpoint: {
    filterKey: string;
    latestId: string;
    latestOccurredAt: number | null;
    runId: number;
    now: number;
  },
): void {
  sqliteOf(store)
    .prepare(
      `INSERT INTO checkpoints (filter_key, latest_id, latest_occurred_at, updated_at, sync_run_id)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(filter_key) DO UPDATE SET latest_id = excluded.latest_id,
         latest_occurred_at = excluded.latest_occurred_at, updated_at = excluded.updated_at,
         sync_run_id = excluded.sync_run_id`,
    )
    .run(
      checkpoint.filterKey,
      checkpoint.latestId,
      checkpoint.latestOccurredAt,
      checkpoint.now,
      checkpoint.runId,
    );
}

/**
 * The newest stored record of a server-day range and filter set: the checkpoint of a finished plan whose
 * newest window held no (valid) record on its first page.
 */
export function newestStoredRecord(
  store: Store,
  since: string,
  until: string,
  actionTypes: readonly string[],
): { id: string; occurredAt: number | null } | undefined {
  const placeholders = actionTypes.map(() => "?").join(", ");
  return sqliteOf(store)
    .prepare<unknown[], { id: string; occurredAt: number | null }>(
      `SELECT id, occurred_at AS occurredAt FROM audit_logs WHERE server_day BETWEEN ? AND ?
       ${actionTypes.length === 0 ? "" : `AND action_type IN (${placeholders})`}
       ORDER BY occurred_at DESC, seq DESC LIMIT 1`,
    )
    .get(since, until, ...actionTypes);
}
