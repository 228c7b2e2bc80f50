// Coverage rows per filter set and server day, the days a finished plan owes a check; the newest record.
import { z } from "zod";
import { parseStoredJson } from "../storedJson.ts";
import { COVERAGE_COLUMNS } from "./digests.ts";
import { deleteMetaValueQuery, readMetaValueIn, writeMetaValueQuery } from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { inTransaction, type Queries, queriesOf, type SQL, sql } from "./query.ts";

export async function readCoverage(store: AnyStore, filterKey: string, day: string) {
  return (await queriesOf(store)).get<Omit<CoverageDay, "day" | "dayClosed">>(
    sql`SELECT server_total AS "serverTotal", local_count AS "localCount", quarantined_count AS "quarantinedCount"
        FROM coverage WHERE filter_key = ${filterKey} AND day = ${day}`,
  );
}

/** A checked day: what the server counted and the store holds. */
export interface CoverageDay {
  day: string;
  serverTotal: number;
  /** Records held for the day: valid ones plus quarantined ones. */
  localCount: number;
  quarantinedCount: number;
  /** The server's day had ended when it was checked (a final count). */
  dayClosed: boolean;
}

/** Days' rows in one statement (a backfill checks hundreds: a round trip each on PostgreSQL), returned as stored. */
export function writeCoverageRowsQuery(
  rows: readonly (CoverageDay & { filterKey: string; runId: number; now: number })[],
): SQL {
  const values = rows.map(
    (row) => sql`(${row.filterKey}, ${row.day}, ${row.serverTotal}, ${row.localCount}, ${row.now},
      ${row.runId}, ${row.dayClosed ? 1 : 0}, ${row.quarantinedCount})`,
  );
  return sql`INSERT INTO coverage (filter_key, day, server_total, local_count, checked_at, sync_run_id, day_closed,
      quarantined_count)
    VALUES ${sql.join(values, sql`, `)}
    ON CONFLICT (filter_key, day) DO UPDATE SET server_total = excluded.server_total,
      local_count = excluded.local_count, checked_at = excluded.checked_at, sync_run_id = excluded.sync_run_id,
      day_closed = excluded.day_closed, quarantined_count = excluded.quarantined_count
    RETURNING ${sql.raw(COVERAGE_COLUMNS)}`;
}

/** Days of a filter set whose coverage was taken before the server's day ended: to be checked again. */
export async function openCoverageDays(store: AnyStore, filterKey: string): Promise<string[]> {
  const rows = await (await queriesOf(store)).all<{ day: string }>(
    sql`SELECT day FROM coverage WHERE filter_key = ${filterKey} AND day_closed = 0 ORDER BY day COLLATE "binary"`,
  );
  return rows.map((r) => r.day);
}

/** Texts of the newest stored record with a parseable time: its offset is the server zone's latest. */
export async function newestRecordTimeTexts(store: AnyStore) {
  return (await queriesOf(store)).get<{ dateText: string; timeText: string }>(
    sql`SELECT date_text AS "dateText", time_text AS "timeText" FROM audit_logs
        WHERE occurred_at IS NOT NULL ORDER BY occurred_at DESC LIMIT 1`,
  );
}

/** The newest seq of the store (0 when empty): where an export that starts now ends, what a check has seen. */
export async function maxSeq(store: AnyStore): Promise<number> {
  const q = await queriesOf(store);
  const row = await q.get<{ seq: number | null }>(sql`SELECT max(seq) AS seq FROM audit_logs`);
  return row?.seq ?? 0;
}

// Days a finished plan owes a coverage check, emptied as rows are written (a killed run leaves the rest).
const pendingCoverageKey = (filterKey: string) => `coverage_pending:${filterKey}`;

/** The owed days kept in meta ([] when missing or unreadable). */
const parsePendingDays = (value: string | undefined) => parseStoredJson(z.array(z.string()), value) ?? [];

export async function readPendingCoverageDays(store: AnyStore, filterKey: string): Promise<string[]> {
  return parsePendingDays(await readMetaValueIn(await queriesOf(store), pendingCoverageKey(filterKey)));
}

/** Inside a transaction: days join the owed list (a plan's end: each once, in order) or, checked, leave. */
export async function changePendingCoverageDaysIn(
  q: Queries,
  filterKey: string,
  change: { add: readonly string[] } | { remove: readonly string[] },
  now: number,
): Promise<void> {
  const key = pendingCoverageKey(filterKey);
  let owed = parsePendingDays(await readMetaValueIn(q, key));
  if ("add" in change) owed = [...new Set([...owed, ...change.add])].sort();
  else {
    const done = new Set(change.remove);
    if (!owed.some((d) => done.has(d))) return;
    owed = owed.filter((d) => !done.has(d));
  }
  await q.run(
    owed.length === 0 ? deleteMetaValueQuery(key) : writeMetaValueQuery(key, JSON.stringify(owed), now),
  );
}

export async function addPendingCoverageDays(
  store: AnyStore,
  filterKey: string,
  days: readonly string[],
  now: number,
): Promise<void> {
  await inTransaction(store, (q) => changePendingCoverageDaysIn(q, filterKey, { add: days }, now));
}
