// Coverage on PostgreSQL (src/store/coverageCounts.ts and coverageState.ts on SQLite): what the store
// holds per server day, the coverage rows and their digest, the days still owed a check. The same SQL
// shapes as SQLite's, the merging and walking done by the SQLite modules' pure functions. Text keys
// sort COLLATE "C" (SQLite's byte order): the coverage digest folds rows in that order.
import { and, eq, sql } from "drizzle-orm";
import type pg from "pg";
import {
  type CoverageDay,
  type DayCount,
  mergeDayCounts,
  type Relisted,
  relistedShift,
  runStartOf,
} from "../coverageCounts.ts";
import { parsePendingDays, pendingCoverageKey, withoutPendingDays } from "../coverageState.ts";
import type { PgStore } from "./connection.ts";
import { readPgMeta, updatePgCoverageDigest, writePgMeta } from "./quarantine.ts";
import { coverage } from "./schema.ts";
import { onPgSession, pgDrizzleOn, pgRows, withPgDb } from "./session.ts";
import { inPgTransaction } from "./transaction.ts";

/** `AND <expr> = ANY($n)` for a non-empty filter set, with its parameter appended to `values`. */
function typeFilter(expression: string, actionTypes: readonly string[], values: unknown[]): string {
  if (actionTypes.length === 0) return "";
  values.push([...actionTypes]);
  return `AND ${expression} = ANY($${values.length})`;
}

const QUARANTINE_HELD = `(q.record_id IS NULL OR NOT EXISTS (SELECT 1 FROM audit_logs a WHERE a.id = q.record_id))`;
const QUARANTINE_TYPE = "(q.raw::json ->> 'actionType')";

// ---- listed days (inside the batch's transaction) ------------------------------------------------

/** The server listed these records under `day` (a single-day read): as SQLite's noteListedDay, set-based. */
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

// ---- counts --------------------------------------------------------------------------------------

async function relistedOn(
  client: pg.ClientBase,
  from: string,
  to: string,
  actionTypes: readonly string[],
): Promise<Relisted[]> {
  const values: unknown[] = [from, to];
  return pgRows<Relisted>(
    client,
    `SELECT a.server_day AS own, l.day AS listed FROM listed_days l JOIN audit_logs a ON a.id = l.audit_log_id
     WHERE ((a.server_day BETWEEN $1 AND $2) OR (l.day BETWEEN $1 AND $2)) ${typeFilter("a.action_type", actionTypes, values)}`,
    values,
  );
}

/** Records held for the server days from..to (both included). */
export async function localPgCountForRange(
  store: PgStore,
  from: string,
  to: string,
  actionTypes: readonly string[],
): Promise<number> {
  return onPgSession(store, async (client) => {
    const storedValues: unknown[] = [from, to];
    const [stored] = await pgRows<{ n: number }>(
      client,
      `SELECT count(*) AS n FROM audit_logs WHERE server_day BETWEEN $1 AND $2
       ${typeFilter("action_type", actionTypes, storedValues)}`,
      storedValues,
    );
    const moved = relistedShift(await relistedOn(client, from, to, actionTypes), from, to);
    const values: unknown[] = [from, to];
    const [quarantined] = await pgRows<{ n: number }>(
      client,
      `SELECT count(DISTINCT coalesce(q.record_id, q.raw_hash)) AS n FROM quarantine q
       WHERE ${QUARANTINE_HELD}
         AND (q.server_day BETWEEN $1 AND $2 OR (q.server_day IS NULL AND q.day_min >= $1 AND q.day_max <= $2))
         ${typeFilter(QUARANTINE_TYPE, actionTypes, values)}`,
      values,
    );
    return (stored?.n ?? 0) + moved + (quarantined?.n ?? 0);
  });
}

/** Per server day of from..to, what the store holds (days without a record are left out). */
export async function localPgCountsByDay(
  store: PgStore,
  from: string,
  to: string,
  actionTypes: readonly string[],
): Promise<Map<string, DayCount>> {
  return onPgSession(store, async (client) => {
    const storedValues: unknown[] = [from, to];
    const stored = await pgRows<{ day: string; n: number }>(
      client,
      `SELECT server_day AS day, count(*) AS n FROM audit_logs WHERE server_day BETWEEN $1 AND $2
       ${typeFilter("action_type", actionTypes, storedValues)} GROUP BY server_day ORDER BY server_day COLLATE "C"`,
      storedValues,
    );
    const values: unknown[] = [from, to];
    const quarantined = await pgRows<{ day: string; n: number }>(
      client,
      `SELECT day, count(DISTINCT key) AS n FROM (
         SELECT coalesce(q.server_day, CASE WHEN q.day_min = q.day_max THEN q.day_min END) AS day,
                coalesce(q.record_id, q.raw_hash) AS key
         FROM quarantine q WHERE ${QUARANTINE_HELD} ${typeFilter(QUARANTINE_TYPE, actionTypes, values)}
       ) held WHERE day BETWEEN $1 AND $2 GROUP BY day ORDER BY day COLLATE "C"`,
      values,
    );
    return mergeDayCounts(stored, await relistedOn(client, from, to, actionTypes), quarantined, from, to);
  });
}

// ---- coverage rows -------------------------------------------------------------------------------

export async function readPgCoverage(
  store: PgStore,
  filterKey: string,
  day: string,
): Promise<{ serverTotal: number; localCount: number; quarantinedCount: number } | undefined> {
  const [row] = await withPgDb(store, (db) =>
    db
      .select({
        serverTotal: coverage.serverTotal,
        localCount: coverage.localCount,
        quarantinedCount: coverage.quarantinedCount,
      })
      .from(coverage)
      .where(and(eq(coverage.filterKey, filterKey), eq(coverage.day, day))),
  );
  return row;
}

/** Days whose coverage was taken before the server's day ended. */
export async function openPgCoverageDays(store: PgStore, filterKey: string): Promise<string[]> {
  const rows = await withPgDb(store, (db) =>
    db
      .select({ day: coverage.day })
      .from(coverage)
      .where(and(eq(coverage.filterKey, filterKey), eq(coverage.dayClosed, 0)))
      .orderBy(sql`${coverage.day} COLLATE "C"`),
  );
  return rows.map((r) => r.day);
}

/** Texts of the newest stored record with a parseable time. */
export async function newestPgRecordTimeTexts(
  store: PgStore,
): Promise<{ dateText: string; timeText: string } | undefined> {
  const [row] = await onPgSession(store, (client) =>
    pgRows<{ dateText: string; timeText: string }>(
      client,
      `SELECT date_text AS "dateText", time_text AS "timeText" FROM audit_logs
       WHERE occurred_at IS NOT NULL ORDER BY occurred_at DESC LIMIT 1`,
    ),
  );
  return row;
}

/** Coverage rows of checked days, those days off the owed list, and the digest, in one transaction. */
export async function recordPgCoverage(
  store: PgStore,
  filterKey: string,
  days: readonly CoverageDay[],
  runId: number,
  now: number,
): Promise<void> {
  await inPgTransaction(store, async (client) => {
    const db = pgDrizzleOn(client);
    for (const d of days) {
      const row = {
        serverTotal: d.serverTotal,
        localCount: d.localCount,
        checkedAt: now,
        syncRunId: runId,
        dayClosed: d.dayClosed ? 1 : 0,
        quarantinedCount: d.quarantinedCount,
      };
      await db
        .insert(coverage)
        .values({ filterKey, day: d.day, ...row })
        .onConflictDoUpdate({ target: [coverage.filterKey, coverage.day], set: row });
    }
    const current = parsePendingDays(await readPgMeta(client, pendingCoverageKey(filterKey)));
    const remaining = withoutPendingDays(
      current,
      days.map((d) => d.day),
    );
    if (remaining !== null) await writePgPendingDays(client, filterKey, remaining, now);
    // verify checks coverage against this digest: an edited or deleted row is caught.
    await updatePgCoverageDigest(client);
  });
}

/** Days of from..to whose last check found fewer records held than the server counted, with the shortfall. */
export async function knownPgShortfalls(
  store: PgStore,
  filterKey: string,
  from: string,
  to: string,
): Promise<Map<string, number>> {
  const rows = await onPgSession(store, (client) =>
    pgRows<{ day: string; short: number }>(
      client,
      `SELECT day, server_total - local_count AS short FROM coverage
       WHERE filter_key = $1 AND day BETWEEN $2 AND $3 AND server_total > local_count ORDER BY day COLLATE "C"`,
      [filterKey, from, to],
    ),
  );
  return new Map(rows.map((r) => [r.day, r.short]));
}

/** The first day of the unbroken run of checked days that ends the day before `day`. */
export async function checkedPgRunStart(store: PgStore, filterKey: string, day: string): Promise<string> {
  const rows = await onPgSession(store, (client) =>
    pgRows<{ day: string }>(
      client,
      `SELECT day FROM coverage WHERE filter_key = $1 AND day COLLATE "C" < $2 ORDER BY day COLLATE "C" DESC`,
      [filterKey, day],
    ),
  );
  return runStartOf(
    day,
    rows.map((r) => r.day),
  );
}

// ---- days still owed a check ---------------------------------------------------------------------

async function writePgPendingDays(
  client: pg.ClientBase,
  filterKey: string,
  days: readonly string[],
  now: number,
): Promise<void> {
  if (days.length === 0) {
    await client.query("DELETE FROM meta WHERE key = $1", [pendingCoverageKey(filterKey)]);
    return;
  }
  await writePgMeta(client, pendingCoverageKey(filterKey), JSON.stringify(days), now);
}

export async function readPgPendingCoverageDays(store: PgStore, filterKey: string): Promise<string[]> {
  return parsePendingDays(
    await onPgSession(store, (client) => readPgMeta(client, pendingCoverageKey(filterKey))),
  );
}
