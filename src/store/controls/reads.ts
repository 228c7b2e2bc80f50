// What `flagtrail check` reads besides the report's queries: the changes of a period with who made them
// and their change logs, and when the last sync succeeded. One text for both engines (../query.ts).
import type { AnyStore } from "../openAny.ts";
import { queriesOf, sql } from "../query.ts";

export interface ChangeRow {
  id: string;
  occurred_at: number;
  name: string;
  action_type: string;
  updated_by: string | null;
  updated_by_user_id: string | null;
  change_log: string | null;
}

/** Experiment state changes and config edits (the report's two views) in [start, end), in time order. */
export async function readChanges(store: AnyStore, start: number, end: number): Promise<ChangeRow[]> {
  const q = await queriesOf(store);
  return q.all<ChangeRow>(sql`
    SELECT id, occurred_at, name, action_type, updated_by, updated_by_user_id, change_log, seq
    FROM (
      SELECT id, seq, occurred_at, name, action_type, updated_by, updated_by_user_id, change_log
      FROM experiment_state_changes WHERE occurred_at >= ${start} AND occurred_at < ${end}
      UNION ALL
      SELECT id, seq, occurred_at, name, action_type, updated_by, updated_by_user_id, change_log
      FROM config_edits WHERE occurred_at >= ${start} AND occurred_at < ${end}
    ) changes
    ORDER BY occurred_at, seq`);
}

/** When the last sync that ended well finished (epoch ms), or null when none did. */
export async function lastSyncAt(store: AnyStore): Promise<number | null> {
  const q = await queriesOf(store);
  const row = await q.get<{ at: number | null }>(
    sql`SELECT max(finished_at) AS at FROM sync_runs WHERE outcome = 'ok'`,
  );
  return row?.at ?? null;
}

/** The end of the period the last check evaluated (the next check's default start), or null. */
export async function lastCheckEnd(store: AnyStore): Promise<number | null> {
  const q = await queriesOf(store);
  const row = await q.get<{ period_end: number }>(
    sql`SELECT period_end FROM control_checks ORDER BY id DESC LIMIT 1`,
  );
  return row?.period_end ?? null;
}

/** Each finding's id and control, and when the last check ran. */
export async function readFindingIndex(
  store: AnyStore,
): Promise<{ findings: { id: string; control_id: string }[]; lastCheckAt: number | null }> {
  const q = await queriesOf(store);
  const findings = await q.all<{ id: string; control_id: string }>(
    sql`SELECT id, control_id FROM control_findings ORDER BY control_id, id`,
  );
  const last = await q.get<{ at: number | null }>(sql`SELECT max(checked_at) AS at FROM control_checks`);
  return { findings, lastCheckAt: last?.at ?? null };
}
