// Pure planning: which filter set a sync belongs to and how its date range is cut into windows.
import { addDays } from "./days.ts";

/** "all" for an unfiltered sync, else "types:" + the sorted, deduplicated action types. */
export function filterKeyFor(actionTypes: readonly string[]): string {
  const unique = [...new Set(actionTypes)].sort();
  return unique.length === 0 ? "all" : `types:${unique.join(",")}`;
}

export interface PlannedWindow {
  /** startDate/endDate as sent to the API (YYYY-MM-DD, server days). */
  startDate: string;
  endDate: string;
}

/**
 * Cuts [since, until] into windows of `windowDays` days, newest first. Every window but the newest
 * reaches one day into the next newer one: the API does not document whether endDate is inclusive
 * or in which zone, so adjacent windows overlap and the store deduplicates on id.
 */
export function planWindows(since: string, until: string, windowDays: number): PlannedWindow[] {
  if (!Number.isInteger(windowDays) || windowDays < 1) throw new RangeError("windowDays must be >= 1");
  if (since > until) return [];
  const windows: PlannedWindow[] = [];
  let end = until;
  while (end >= since) {
    const nominalStart = addDays(end, -(windowDays - 1));
    const start = nominalStart < since ? since : nominalStart;
    const requestedEnd = end === until ? until : addDays(end, 1);
    windows.push({ startDate: start, endDate: requestedEnd });
    end = addDays(start, -1);
  }
  return windows;
}
