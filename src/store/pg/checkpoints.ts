// Checkpoints on PostgreSQL (src/store/checkpoints.ts on SQLite): per filter set, the newest record seen.
import type pg from "pg";
import type { Checkpoint } from "../checkpoints.ts";
import type { PgStore } from "./connection.ts";
import { checkpoints } from "./schema.ts";
import { onPgSession, pgDrizzleOn, pgRows } from "./session.ts";

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
  const row = {
    latestId: checkpoint.latestId,
    latestOccurredAt: checkpoint.latestOccurredAt,
    updatedAt: checkpoint.now,
    syncRunId: checkpoint.runId,
  };
  await pgDrizzleOn(client)
    .insert(checkpoints)
    .values({ filterKey: checkpoint.filterKey, ...row })
    .onConflictDoUpdate({ target: checkpoints.filterKey, set: row });
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
