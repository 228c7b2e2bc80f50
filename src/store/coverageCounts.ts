// What the store holds per server day, for comparing with the server's totalItems. A record counts for
// its server day: valid records by their own date unless a single-day read showed the server files them
// under another (listed_days), quarantined ones by their date when it parses, else by the narrowest
// request range that returned them (day_min..day_max). So a gap report means a record is missing. Quarantined records count once per id, and not when a valid version of the id is stored.
// One query text for both engines (src/store/query.ts).
import { removePendingCoverageDaysIn, writeCoverageQuery } from "./coverageState.ts";
import { updateCoverageDigestIn } from "./digests.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, inTransaction, type Queries, queriesOf, type SQL, sql } from "./query.ts";

/**
 * Inside the write transaction of a single-day read: the server listed these records under `day`. A record whose own date text says
 * another day (written in another zone) is counted on `day` from now on.
 */
export async function noteListedDay(q: Queries, ids: readonly string[], day: string): Promise<void> {
  if (ids.length === 0) return;
  // Once each: one statement may not upsert the same row twice.
  const unique = inList([...new Set(ids)]);
  await q.run(
    sql`INSERT INTO listed_days (audit_log_id, day)
        SELECT id, ${day} FROM audit_logs WHERE id IN ${unique} AND server_day IS DISTINCT FROM ${day}
        ON CONFLICT (audit_log_id) DO UPDATE SET day = excluded.day`,
  );
  await q.run(
    sql`DELETE FROM listed_days WHERE audit_log_id IN
          (SELECT id FROM audit_logs WHERE id IN ${unique} AND server_day IS NOT DISTINCT FROM ${day})`,
  );
}

/** `AND <expression> IN (…)` for a non-empty filter set. */
const typeFilter = (expression: SQL, actionTypes: readonly string[]): SQL =>
  actionTypes.length === 0 ? sql`` : sql`AND ${expression} IN ${inList(actionTypes)}`;

const QUARANTINE_HELD = sql`(q.record_id IS NULL OR NOT EXISTS (SELECT 1 FROM audit_logs a WHERE a.id = q.record_id))`;
const QUARANTINE_TYPE = sql`json_extract(q.raw, '$.actionType')`;

/**
 * Records the server lists on another day than their own date's, as (own day, listed day) pairs of the
 * filter set: the corrections to counts by server_day.
 */
function relisted(q: Queries, from: string, to: string, actionTypes: readonly string[]): Promise<Relisted[]> {
  return q.all<Relisted>(
    sql`SELECT a.server_day AS own, l.day AS listed FROM listed_days l JOIN audit_logs a ON a.id = l.audit_log_id
        WHERE ((a.server_day BETWEEN ${from} AND ${to}) OR (l.day BETWEEN ${from} AND ${to}))
          ${typeFilter(sql`a.action_type`, actionTypes)}`,
  );
}

const within = (day: string | null, from: string, to: string) => day !== null && day >= from && day <= to;

/** A record the server lists on another day than its own date's: (own day, listed day). */
interface Relisted {
  own: string | null;
  listed: string;
}

/** How many records the relisted ones move into (+) or out of (−) the days from..to. */
function relistedShift(relistedRows: readonly Relisted[], from: string, to: string): number {
  let moved = 0;
  for (const r of relistedRows) {
    moved += (within(r.listed, from, to) ? 1 : 0) - (within(r.own, from, to) ? 1 : 0);
  }
  return moved;
}

/**
 * Per day of from..to, what the store holds: valid records counted by server day (`stored`), moved
 * by the relisted ones, plus quarantined ones per day (`quarantined`). The merge both engines use.
 */
function mergeDayCounts(
  stored: readonly { day: string; n: number }[],
  relistedRows: readonly Relisted[],
  quarantined: readonly { day: string; n: number }[],
  from: string,
  to: string,
): Map<string, DayCount> {
  const counts = new Map<string, DayCount>();
  for (const row of stored) counts.set(row.day, { day: row.day, held: row.n, quarantined: 0 });
  const add = (day: string | null, n: number) => {
    if (!within(day, from, to) || day === null) return;
    const count = counts.get(day) ?? { day, held: 0, quarantined: 0 };
    count.held += n;
    counts.set(day, count);
  };
  for (const r of relistedRows) {
    add(r.own, -1);
    add(r.listed, 1);
  }
  for (const row of quarantined) {
    const count = counts.get(row.day) ?? { day: row.day, held: 0, quarantined: 0 };
    count.held += row.n;
    count.quarantined += row.n;
    counts.set(row.day, count);
  }
  return counts;
}

/**
 * The first day of the unbroken run of checked days that ends the day before `day`, from the checked
 * days before `day`, newest first.
 */
function runStartOf(day: string, checkedBeforeDesc: readonly string[]): string {
  let start = day;
  for (const checked of checkedBeforeDesc) {
    const expected = new Date(Date.parse(`${start}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    if (checked !== expected) break;
    start = checked;
  }
  return start;
}

/** Records held for the server days from..to (both included). */
export async function localCountForRange(
  store: AnyStore,
  from: string,
  to: string,
  actionTypes: readonly string[],
): Promise<number> {
  const q = await queriesOf(store);
  const stored = await q.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM audit_logs WHERE server_day BETWEEN ${from} AND ${to}
        ${typeFilter(sql`action_type`, actionTypes)}`,
  );
  const moved = relistedShift(await relisted(q, from, to, actionTypes), from, to);
  const quarantined = await q.get<{ n: number }>(
    sql`SELECT count(DISTINCT coalesce(q.record_id, q.raw_hash)) AS n FROM quarantine q
        WHERE ${QUARANTINE_HELD}
          AND (q.server_day BETWEEN ${from} AND ${to}
               OR (q.server_day IS NULL AND q.day_min >= ${from} AND q.day_max <= ${to}))
          ${typeFilter(QUARANTINE_TYPE, actionTypes)}`,
  );
  return Number(stored?.n ?? 0) + moved + Number(quarantined?.n ?? 0);
}

export interface DayCount {
  day: string;
  /** Valid and quarantined records held for the day. */
  held: number;
  quarantined: number;
}

/** Per server day of from..to, what the store holds (days without a record are left out). */
export async function localCountsByDay(
  store: AnyStore,
  from: string,
  to: string,
  actionTypes: readonly string[],
): Promise<Map<string, DayCount>> {
  const q = await queriesOf(store);
  const stored = await q.all<{ day: string; n: number }>(
    sql`SELECT server_day AS day, count(*) AS n FROM audit_logs WHERE server_day BETWEEN ${from} AND ${to}
        ${typeFilter(sql`action_type`, actionTypes)} GROUP BY server_day ORDER BY server_day COLLATE "binary"`,
  );
  const quarantined = await q.all<{ day: string; n: number }>(
    sql`SELECT day, count(DISTINCT key) AS n FROM (
          SELECT coalesce(q.server_day, CASE WHEN q.day_min = q.day_max THEN q.day_min END) AS day,
                 coalesce(q.record_id, q.raw_hash) AS key
          FROM quarantine q WHERE ${QUARANTINE_HELD} ${typeFilter(QUARANTINE_TYPE, actionTypes)}
        ) held WHERE day BETWEEN ${from} AND ${to} GROUP BY day ORDER BY day COLLATE "binary"`,
  );
  return mergeDayCounts(stored, await relisted(q, from, to, actionTypes), quarantined, from, to);
}

export interface CoverageDay {
  day: string;
  serverTotal: number;
  localCount: number;
  quarantinedCount: number;
  dayClosed: boolean;
}

/** Coverage rows of checked days, those days off the owed list, and the digest, in one transaction. */
export async function recordCoverage(
  store: AnyStore,
  filterKey: string,
  days: readonly CoverageDay[],
  runId: number,
  now: number,
): Promise<void> {
  await inTransaction(store, async (q) => {
    for (const d of days) await q.run(writeCoverageQuery({ filterKey, runId, now, ...d }));
    await removePendingCoverageDaysIn(
      q,
      filterKey,
      days.map((d) => d.day),
      now,
    );
    // verify checks coverage against this digest: an edited or deleted row is caught.
    await updateCoverageDigestIn(q);
  });
}

/**
 * Days of from..to whose last check found fewer records held than the server counted, with the
 * shortfall: a gap already reported (and already re-read) is expected again, not searched for again.
 */
export async function knownShortfalls(
  store: AnyStore,
  filterKey: string,
  from: string,
  to: string,
): Promise<Map<string, number>> {
  const rows = await (await queriesOf(store)).all<{ day: string; short: number }>(
    sql`SELECT day, server_total - local_count AS short FROM coverage
        WHERE filter_key = ${filterKey} AND day BETWEEN ${from} AND ${to} AND server_total > local_count
        ORDER BY day COLLATE "binary"`,
  );
  return new Map(rows.map((r) => [r.day, r.short]));
}

/**
 * The first day of the unbroken run of checked days that ends the day before `day` (`day` itself when
 * the day before was never checked): the history a nightly count can cover in the same request.
 */
export async function checkedRunStart(store: AnyStore, filterKey: string, day: string): Promise<string> {
  const rows = await (await queriesOf(store)).all<{ day: string }>(
    sql`SELECT day FROM coverage WHERE filter_key = ${filterKey} AND day COLLATE "binary" < ${day}
        ORDER BY day COLLATE "binary" DESC`,
  );
  return runStartOf(
    day,
    rows.map((r) => r.day),
  );
}
