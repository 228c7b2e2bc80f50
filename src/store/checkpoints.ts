// Per filter set, the newest record seen: sent as latestID by the next incremental run.
import { inList, onStore, type Queries, type SQL, sql } from "./query.ts";

export interface Checkpoint {
  filterKey: string;
  latestId: string;
  latestOccurredAt: number | null;
  /** The checkpoint record's server day, when the record is stored and its date parsed. */
  serverDay: string | null;
  updatedAt: number;
}

function checkpointsWhere(filter: SQL): SQL {
  return sql`SELECT c.filter_key AS "filterKey", c.latest_id AS "latestId",
      c.latest_occurred_at AS "latestOccurredAt", a.server_day AS "serverDay", c.updated_at AS "updatedAt"
    FROM checkpoints c LEFT JOIN audit_logs a ON a.id = c.latest_id ${filter}`;
}

export async function readCheckpointIn(q: Queries, filterKey: string): Promise<Checkpoint | undefined> {
  return q.get<Checkpoint>(checkpointsWhere(sql`WHERE c.filter_key = ${filterKey}`));
}

export const readStoredCheckpoint = onStore(readCheckpointIn);

export async function writeCheckpointIn(
  q: Queries,
  c: Pick<Checkpoint, "filterKey" | "latestId" | "latestOccurredAt"> & { runId: number; now: number },
): Promise<void> {
  await q.run(
    sql`INSERT INTO checkpoints (filter_key, latest_id, latest_occurred_at, updated_at, sync_run_id)
      VALUES (${c.filterKey}, ${c.latestId}, ${c.latestOccurredAt}, ${c.now}, ${c.runId})
      ON CONFLICT (filter_key) DO UPDATE SET latest_id = excluded.latest_id,
        latest_occurred_at = excluded.latest_occurred_at, updated_at = excluded.updated_at,
        sync_run_id = excluded.sync_run_id`,
  );
}

/** The newest stored record of a range and filter set: the checkpoint of a plan that found no head. */
export async function newestStoredRecordIn(
  q: Queries,
  since: string,
  until: string,
  actionTypes: readonly string[],
): Promise<{ id: string; occurredAt: number | null } | undefined> {
  const types = actionTypes.length === 0 ? sql`` : sql`AND action_type IN ${inList(actionTypes)}`;
  // Undated records last on both engines (SQLite's DESC alone would, PostgreSQL's would put them first).
  return q.get(
    sql`SELECT id, occurred_at AS "occurredAt" FROM audit_logs
      WHERE server_day BETWEEN ${since} AND ${until} ${types}
      ORDER BY occurred_at DESC NULLS LAST, seq DESC LIMIT 1`,
  );
}

/** Every checkpoint, by filter key (byte order). */
export async function listCheckpointsIn(q: Queries): Promise<Checkpoint[]> {
  return q.all<Checkpoint>(checkpointsWhere(sql`ORDER BY c.filter_key COLLATE "binary"`));
}
