// Coverage rows per filter set and server day, and the days a finished plan still owes a check. These
// functions run inside the sync's transactions, so that rows and progress commit together.
import { z } from "zod";
import { sqliteOf } from "./connection.ts";
import { deleteMetaValueQuery, readMetaValueIn, writeMetaValueQuery } from "./metaValues.ts";
import type { Store } from "./open.ts";
import type { AnyStore } from "./openAny.ts";
import { inTransaction, type Queries } from "./query.ts";

// ---- coverage --------------------------------------------------------------------------------------

/** The stored coverage of a day, if any. */
export function readCoverage(
  store: Store,
  filterKey: string,
  day: string,
): { serverTotal: number; localCount: number; quarantinedCount: number } | undefined {
  return sqliteOf(store)
    .prepare<[string, string], { serverTotal: number; localCount: number; quarantinedCount: number }>(
      `SELECT server_total AS serverTotal, local_count AS localCount, quarantined_count AS quarantinedCount
       FROM coverage WHERE filter_key = ? AND day = ?`,
    )
    .get(filterKey, day);
}

export function writeCoverage(
  store: Store,
  row: {
    filterKey: string;
    day: string;
    serverTotal: number;
    /** Records held for the day: valid ones plus quarantined ones. */
    localCount: number;
    quarantinedCount: number;
    /** The server's day had ended when it was checked (a final count). */
    dayClosed: boolean;
    runId: number;
    now: number;
  },
): void {
  sqliteOf(store)
    .prepare(
      `INSERT INTO coverage (filter_key, day, server_total, local_count, checked_at, sync_run_id, day_closed,
         quarantined_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(filter_key, day) DO UPDATE SET server_total = excluded.server_total,
         local_count = excluded.local_count, checked_at = excluded.checked_at, sync_run_id = excluded.sync_run_id,
         day_closed = excluded.day_closed, quarantined_count = excluded.quarantined_count`,
    )
    .run(
      row.filterKey,
      row.day,
      row.serverTotal,
      row.localCount,
      row.now,
      row.runId,
      row.dayClosed ? 1 : 0,
      row.quarantinedCount,
    );
}

/** Days of a filter set whose coverage was taken before the server's day ended: to be checked again. */
export function openCoverageDays(store: Store, filterKey: string): string[] {
  return sqliteOf(store)
    .prepare<[string], string>(
      "SELECT day FROM coverage WHERE filter_key = ? AND day_closed = 0 ORDER BY day",
    )
    .pluck()
    .all(filterKey);
}

/** Texts of the newest stored record with a parseable time: its offset is the server zone's latest. */
export function newestRecordTimeTexts(store: Store): { dateText: string; timeText: string } | undefined {
  return sqliteOf(store)
    .prepare<[], { dateText: string; timeText: string }>(
      `SELECT date_text AS dateText, time_text AS timeText FROM audit_logs
       WHERE occurred_at IS NOT NULL ORDER BY occurred_at DESC LIMIT 1`,
    )
    .get();
}

// ---- coverage still to check -----------------------------------------------------------------------

/**
 * Days whose coverage a finished plan still owes, per filter set (meta `coverage_pending:<filter_key>`).
 * Written in the transaction that drops the plan and emptied day by day as coverage rows are written, so
 * a run killed during its coverage phase leaves the rest for the next run.
 */
export const pendingCoverageKey = (filterKey: string) => `coverage_pending:${filterKey}`;
const pendingCoverageSchema = z.array(z.string());

/** The owed days kept in meta ([] when missing or unreadable). */
export function parsePendingDays(value: string | undefined): string[] {
  if (value === undefined) return [];
  const parsed = pendingCoverageSchema.safeParse(JSON.parse(value));
  return parsed.success ? parsed.data : [];
}

/** The owed days with `days` added: each once, in order. */
function withPendingDays(current: readonly string[], days: readonly string[]): string[] {
  return [...new Set([...current, ...days])].sort();
}

/** The owed days with `days` checked off, or null when none of them was owed (nothing to write). */
export function withoutPendingDays(current: readonly string[], days: readonly string[]): string[] | null {
  const done = new Set(days);
  if (!current.some((d) => done.has(d))) return null;
  return current.filter((d) => !done.has(d));
}

export function readPendingCoverageDays(store: Store, filterKey: string): string[] {
  return parsePendingDays(
    sqliteOf(store)
      .prepare<[string], string>("SELECT value FROM meta WHERE key = ?")
      .pluck()
      .get(pendingCoverageKey(filterKey)),
  );
}

function writePendingCoverageDays(
  store: Store,
  filterKey: string,
  days: readonly string[],
  now: number,
): void {
  if (days.length === 0) {
    sqliteOf(store).prepare("DELETE FROM meta WHERE key = ?").run(pendingCoverageKey(filterKey));
    return;
  }
  sqliteOf(store)
    .prepare(
      `INSERT INTO meta (key, value, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    )
    .run(pendingCoverageKey(filterKey), JSON.stringify(days), now);
}

/** Inside a transaction on either engine (a plan's end): `days` join the owed list. */
export async function addPendingCoverageDaysIn(
  q: Queries,
  filterKey: string,
  days: readonly string[],
  now: number,
): Promise<void> {
  const key = pendingCoverageKey(filterKey);
  const owed = withPendingDays(parsePendingDays(await readMetaValueIn(q, key)), days);
  await q.run(
    owed.length === 0 ? deleteMetaValueQuery(key) : writeMetaValueQuery(key, JSON.stringify(owed), now),
  );
}

/** `days` join the owed list, in a transaction of their own, on either engine. */
export async function addPendingCoverageDays(
  store: AnyStore,
  filterKey: string,
  days: readonly string[],
  now: number,
): Promise<void> {
  await inTransaction(store, (q) => addPendingCoverageDaysIn(q, filterKey, days, now));
}

export function removePendingCoverageDays(
  store: Store,
  filterKey: string,
  days: readonly string[],
  now: number,
): void {
  const remaining = withoutPendingDays(readPendingCoverageDays(store, filterKey), days);
  if (remaining !== null) writePendingCoverageDays(store, filterKey, remaining, now);
}
