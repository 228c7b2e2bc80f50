// What the store holds per server day, for comparing with the server's totalItems: the arithmetic over
// the rows the store reads (src/store/coverageCounts.ts). A record the server lists on another day than
// its own date's moves one count from its own day to the listed one; quarantined records add to a day.
import {
  checkedDaysBefore,
  heldRowsByDay,
  heldRowsInRange,
  type Relisted,
  type Store,
} from "../store/syncStore.ts";
import { addDays } from "./days.ts";

const within = (day: string | null, from: string, to: string) => day !== null && day >= from && day <= to;

/** How many records the relisted ones move into (+) or out of (−) the days from..to. */
function relistedShift(relistedRows: readonly Relisted[], from: string, to: string): number {
  let moved = 0;
  for (const r of relistedRows) {
    moved += (within(r.listed, from, to) ? 1 : 0) - (within(r.own, from, to) ? 1 : 0);
  }
  return moved;
}

export interface DayCount {
  day: string;
  /** Valid and quarantined records held for the day. */
  held: number;
  quarantined: number;
}

/**
 * Per day of from..to, what the store holds: valid records counted by server day (`stored`), moved
 * by the relisted ones, plus quarantined ones per day (`quarantined`).
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

/** Records held for the server days from..to (both included). */
export async function localCountForRange(
  store: Store,
  from: string,
  to: string,
  actionTypes: readonly string[],
): Promise<number> {
  const rows = await heldRowsInRange(store, from, to, actionTypes);
  return rows.stored + relistedShift(rows.relisted, from, to) + rows.quarantined;
}

/** Per server day of from..to, what the store holds (days without a record are left out). */
export async function localCountsByDay(
  store: Store,
  from: string,
  to: string,
  actionTypes: readonly string[],
): Promise<Map<string, DayCount>> {
  const rows = await heldRowsByDay(store, from, to, actionTypes);
  return mergeDayCounts(rows.stored, rows.relisted, rows.quarantined, from, to);
}

/**
 * The first day of the unbroken run of checked days that ends the day before `day` (`day` itself when
 * the day before was never checked): the history a nightly count can cover in the same request.
 */
export async function checkedRunStart(store: Store, filterKey: string, day: string): Promise<string> {
  let start = day;
  for (const checked of await checkedDaysBefore(store, filterKey, day)) {
    if (checked !== addDays(start, -1)) break;
    start = checked;
  }
  return start;
}
