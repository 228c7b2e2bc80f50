// The PostgreSQL record writer's listed days (src/store/pg/syncBatch.ts, inside the batch's transaction):
// as SQLite's noteListedDay (src/store/coverageCounts.ts), set-based. The rest of coverage is one query
// text for both engines in coverageCounts.ts and coverageState.ts; this goes with that writer's rework.
import type pg from "pg";

/** The server listed these records under `day` (a single-day read). */
export async function notePgListedDay(
  client: pg.ClientBase,
  ids: readonly string[],
  day: string,
): Promise<void> {
  if (ids.length === 0) return;
  // Once each: one statement may not upsert the same row twice.
  const unique = [...new Set(ids)];
  await client.query(
    `INSERT INTO listed_days (audit_log_id, day)
     SELECT id, $2 FROM audit_logs WHERE id = ANY($1) AND server_day IS DISTINCT FROM $2
     ON CONFLICT (audit_log_id) DO UPDATE SET day = excluded.day`,
    [unique, day],
  );
  await client.query(
    `DELETE FROM listed_days l USING audit_logs a
     WHERE a.id = l.audit_log_id AND l.audit_log_id = ANY($1) AND a.server_day IS NOT DISTINCT FROM $2`,
    [unique, day],
  );
}
