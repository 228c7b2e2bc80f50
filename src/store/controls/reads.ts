// What `flagtrail check` reads besides the report's queries (./reportQueries/controls.ts): when the last
// sync succeeded, the last check, the findings kept. One text for both engines (../query.ts).
import type { AnyStore } from "../openAny.ts";
import { queriesOf, sql } from "../query.ts";

export interface LastCheck {
  checkedAt: number;
  periodEnd: number;
  /** Null for a check made before flagtrail kept it. */
  lastSeq: number | null;
}

/** The last check of the default period: when it ran, its period's end, the newest seq it saw; or null. */
export async function lastDefaultCheck(store: AnyStore): Promise<LastCheck | null> {
  const q = await queriesOf(store);
  const row = await q.get<LastCheck>(
    sql`SELECT checked_at AS "checkedAt", period_end AS "periodEnd", last_seq AS "lastSeq"
        FROM control_checks WHERE period_given = 0 ORDER BY id DESC LIMIT 1`,
  );
  return row ?? null;
}

/** The earliest time of the records stored after seq `afterSeq` (null: none, or none dated). */
export async function earliestStoredAfter(store: AnyStore, afterSeq: number): Promise<number | null> {
  const q = await queriesOf(store);
  const row = await q.get<{ at: number | null }>(
    // `+ 0`: min() over a plain column would walk the whole occurred_at index on SQLite; this reads the
    // records after the seq alone (SQLite: a rowid range; PostgreSQL: the seq index).
    sql`SELECT min(occurred_at + 0) AS at FROM audit_logs WHERE seq > ${afterSeq}`,
  );
  return row?.at ?? null;
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
