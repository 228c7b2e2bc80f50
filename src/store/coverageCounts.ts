// The rows of what the store holds per server day (summed by src/sync/coverageCounts.ts), compared with
// the server's totalItems; which day a record counts for: docs/sync.md (Coverage).
import type { CoverageRow } from "../digests.ts";
import { checkCoverageBeforeWriteIn } from "./chainRead.ts";
import { type CoverageDay, changePendingCoverageDaysIn, writeCoverageRowsQuery } from "./coverageState.ts";
import { updateCoverageDigestIn } from "./digests.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, inTransaction, type Queries, queriesOf, type SQL, sql } from "./query.ts";

/** Inside a single-day read's write: the server listed these records under `day`, whatever their own date. */
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

const typeFilter = (expression: SQL, actionTypes: readonly string[]): SQL =>
  actionTypes.length === 0 ? sql`` : sql`AND ${expression} IN ${inList(actionTypes)}`;

const QUARANTINE_HELD = sql`(q.record_id IS NULL OR NOT EXISTS (SELECT 1 FROM audit_logs a WHERE a.id = q.record_id))`;
const QUARANTINE_TYPE = sql`json_extract(q.raw, '$.actionType')`;

/** The filter set's Relisted pairs: the corrections to counts by server_day. */
function relisted(q: Queries, from: string, to: string, actionTypes: readonly string[]): Promise<Relisted[]> {
  return q.all<Relisted>(
    sql`SELECT a.server_day AS own, l.day AS listed FROM listed_days l JOIN audit_logs a ON a.id = l.audit_log_id
        WHERE ((a.server_day BETWEEN ${from} AND ${to}) OR (l.day BETWEEN ${from} AND ${to}))
          ${typeFilter(sql`a.action_type`, actionTypes)}`,
  );
}

/** A record the server lists on another day than its own date's: (own day, listed day). */
export interface Relisted {
  own: string | null;
  listed: string;
}

/** The rows that make the count held for the server days from..to (both included). */
export async function heldRowsInRange(
  store: AnyStore,
  from: string,
  to: string,
  actionTypes: readonly string[],
): Promise<{ stored: number; relisted: Relisted[]; quarantined: number }> {
  const q = await queriesOf(store);
  const stored = await q.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM audit_logs WHERE server_day BETWEEN ${from} AND ${to}
        ${typeFilter(sql`action_type`, actionTypes)}`,
  );
  const quarantined = await q.get<{ n: number }>(
    sql`SELECT count(DISTINCT coalesce(q.record_id, q.raw_hash)) AS n FROM quarantine q
        WHERE ${QUARANTINE_HELD}
          AND (q.server_day BETWEEN ${from} AND ${to}
               OR (q.server_day IS NULL AND q.day_min >= ${from} AND q.day_max <= ${to}))
          ${typeFilter(QUARANTINE_TYPE, actionTypes)}`,
  );
  return {
    stored: Number(stored?.n ?? 0),
    relisted: await relisted(q, from, to, actionTypes),
    quarantined: Number(quarantined?.n ?? 0),
  };
}

type DayCount = { day: string; n: number };

/** Per server day of from..to, the rows that make what the store holds (days without a record left out). */
export async function heldRowsByDay(
  store: AnyStore,
  from: string,
  to: string,
  actionTypes: readonly string[],
): Promise<{ stored: DayCount[]; relisted: Relisted[]; quarantined: DayCount[] }> {
  const q = await queriesOf(store);
  const stored = await q.all<DayCount>(
    sql`SELECT server_day AS day, count(*) AS n FROM audit_logs WHERE server_day BETWEEN ${from} AND ${to}
        ${typeFilter(sql`action_type`, actionTypes)} GROUP BY server_day ORDER BY server_day COLLATE "binary"`,
  );
  const quarantined = await q.all<DayCount>(
    sql`SELECT day, count(DISTINCT key) AS n FROM (
          SELECT coalesce(q.server_day, CASE WHEN q.day_min = q.day_max THEN q.day_min END) AS day,
                 coalesce(q.record_id, q.raw_hash) AS key
          FROM quarantine q WHERE ${QUARANTINE_HELD} ${typeFilter(QUARANTINE_TYPE, actionTypes)}
        ) held WHERE day BETWEEN ${from} AND ${to} GROUP BY day ORDER BY day COLLATE "binary"`,
  );
  return { stored, relisted: await relisted(q, from, to, actionTypes), quarantined };
}

const COVERAGE_ROWS_PER_STATEMENT = 500;

/** Coverage rows of checked days, those days off the owed list, and the digest, in one transaction. */
export async function recordCoverage(
  store: AnyStore,
  filterKey: string,
  days: readonly CoverageDay[],
  runId: number,
  now: number,
): Promise<void> {
  await inTransaction(store, async (q) => {
    // Ranges are recorded at once: on PostgreSQL one committing in between looked like an edit here.
    if (q.dialect === "postgres") await q.run(sql`LOCK TABLE coverage IN SHARE ROW EXCLUSIVE MODE`);
    const present = await checkCoverageBeforeWriteIn(q);
    // A day listed twice keeps its last row: one statement may not upsert a row twice.
    const rows = [...new Map(days.map((d) => [d.day, { filterKey, runId, now, ...d }])).values()];
    const written: CoverageRow[] = [];
    // 8 parameters a row: 500 rows stay under SQLite's 32,766 and PostgreSQL's 65,535.
    for (let at = 0; at < rows.length; at += COVERAGE_ROWS_PER_STATEMENT) {
      const chunk = rows.slice(at, at + COVERAGE_ROWS_PER_STATEMENT);
      written.push(...(await q.all<CoverageRow>(writeCoverageRowsQuery(chunk))));
    }
    await changePendingCoverageDaysIn(q, filterKey, { remove: days.map((d) => d.day) }, now);
    await updateCoverageDigestIn(q, present.upserted(written));
  });
}

/** Days of from..to whose last check held fewer than the server counted: gaps known (not searched again). */
export async function knownShortfalls(store: AnyStore, filterKey: string, from: string, to: string) {
  const rows = await (await queriesOf(store)).all<{ day: string; short: number }>(
    sql`SELECT day, server_total - local_count AS short FROM coverage
        WHERE filter_key = ${filterKey} AND day BETWEEN ${from} AND ${to} AND server_total > local_count
        ORDER BY day COLLATE "binary"`,
  );
  return new Map(rows.map((r) => [r.day, r.short]));
}

/** The checked days before `day`, newest first (a nightly count's history: src/sync/coverageCounts.ts). */
export async function checkedDaysBefore(store: AnyStore, filterKey: string, day: string): Promise<string[]> {
  const rows = await (await queriesOf(store)).all<{ day: string }>(
    sql`SELECT day FROM coverage WHERE filter_key = ${filterKey} AND day COLLATE "binary" < ${day}
        ORDER BY day COLLATE "binary" DESC`,
  );
  return rows.map((r) => r.day);
}
