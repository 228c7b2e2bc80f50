// What `flagtrail check` reads besides the report's queries (./reportQueries/controls.ts): when the last
// sync succeeded, the last check, the findings kept. One text for both engines (../query.ts).
import type { AnyStore } from "../openAny.ts";
import { queriesOf, sql } from "../query.ts";

/** The last check: when it ran and the end of the period it evaluated (the next check's default start), or null. */
export async function lastCheck(store: AnyStore): Promise<{ checkedAt: number; periodEnd: number } | null> {
  const q = await queriesOf(store);
  const row = await q.get<{ checkedAt: number; periodEnd: number }>(
    sql`SELECT checked_at AS "checkedAt", period_end AS "periodEnd" FROM control_checks ORDER BY id DESC LIMIT 1`,
  );
  return row ?? null;
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
