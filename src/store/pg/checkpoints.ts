// Checkpoints on PostgreSQL (src/store/checkpoints.ts on SQLite): per filter set, the newest record seen.
import type pg from "pg";
import type { Checkpoint } from "../checkpoints.ts";
import type { PgStore } from "./connection.ts";
import { onPgSession, pgRows } from "./session.ts";

export async function readPgCheckpointOn(
  client: pg.ClientBase,
  filterKey: string,
): Promise<Checkpoint | undefined> {
  const [row] = await pgRows<Checkpoint>(
    client,
    `SELECT c.filter_key AS "filterKey", c.latest_id AS "latestId", c.latest_occurred_at AS "latestOccurredAt",
       a.server_day AS "serverDay", c.updated_at AS "updatedAt"
     FROM checkpoints c LEFT JOIN audit_logs a ON a.id = c.latest_id WHERE c.filter_key = $1`,
    [filterKey],
  );
  return row;
}

export async function readPgCheckpoint(store: PgStore, filterKey: string): Promise<Checkpoint | undefined> {
  return onPgSession(store, (client) => readPgCheckpointOn(client, filterKey));
}

export async function writePgCheckpoint(
  client: pg.ClientBase,
  checkpoint: {
    filterKey: string;
    latestId: string;
    latestOccurredAt: number | null;
    runId: number;
    now: number;
  },
): Promise<void> {
  await client.query(
    `INSERT INTO checkpoints (filter_key, latest_id, latest_occurred_at, updated_at, sync_run_id)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (filter_key) DO UPDATE SET latest_id = excluded.latest_id,
       latest_occurred_at = excluded.latest_occurred_at, updated_at = excluded.updated_at,
       sync_run_id = excluded.sync_run_id`,
    [
      checkpoint.filterKey,
      checkpoint.latestId,
      checkpoint.latestOccurredAt,
      checkpoint.now,
      checkpoint.runId,
    ],
  );
}

/**
 * The newest stored record of a server-day range and filter set. NULLS LAST: SQLite sorts NULL lowest,
 * so its DESC puts undated records last; PostgreSQL's DESC would put them first.
 */
export async function newestPgStoredRecord(
  client: pg.ClientBase,
  since: string,
  until: string,
  actionTypes: readonly string[],
): Promise<{ id: string; occurredAt: number | null } | undefined> {
  const [row] = await pgRows<{ id: string; occurredAt: number | null }>(
    client,
    `SELECT id, occurred_at AS "occurredAt" FROM audit_logs WHERE server_day BETWEEN $1 AND $2
     ${actionTypes.length === 0 ? "" : "AND action_type = ANY($3)"}
     ORDER BY occurred_at DESC NULLS LAST, seq DESC LIMIT 1`,
    actionTypes.length === 0 ? [since, until] : [since, until, [...actionTypes]],
  );
  return row;
}
