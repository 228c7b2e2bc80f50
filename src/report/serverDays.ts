// Which server days a report period overlaps. Coverage (the server's total per day) is kept per server
// calendar day, in the server's zone; the report's days are in --tz. The server's offset is read from
// the time text of the stored record nearest each bound (the only place the API states it).
import { parseAuditTime } from "../api/auditTime.ts";
import type { ReportParams, ReportSnapshot } from "../store/reportQueries.ts";
import type { Period } from "./period.ts";
import {
  REJECTION_ACTION_TYPES,
  REVIEW_EXEMPT_ACTION_TYPES,
  REVIEW_FLOWS,
  REVIEW_WINDOW_MS,
} from "./reviews.ts";

interface ServerDayBound {
  /** YYYY-MM-DD in the server's zone. */
  day: string;
  /** Offset of the server's zone at the bound, minutes east of UTC. */
  offsetMinutes: number;
  /** The server day's first instant (epoch ms) and the next day's; partial when the period cuts it. */
  dayStart: number;
  dayEnd: number;
}

export interface ServerDays {
  first: ServerDayBound;
  last: ServerDayBound;
}

async function offsetNear(snapshot: ReportSnapshot, instant: number): Promise<number | null> {
  for (const row of await snapshot.timeTextsNear(instant)) {
    const parsed = parseAuditTime(row.date_text, row.time_text);
    if (parsed) return parsed.offsetMinutes;
  }
  return null;
}

function boundAt(instant: number, offsetMinutes: number): ServerDayBound {
  const day = new Date(instant + offsetMinutes * 60_000).toISOString().slice(0, 10);
  const dayStart = Date.parse(`${day}T00:00:00Z`) - offsetMinutes * 60_000;
  return { day, offsetMinutes, dayStart, dayEnd: dayStart + 86_400_000 };
}

/** The first and last server day the period overlaps, or null when the store has no dated records. */
export async function serverDaysOf(snapshot: ReportSnapshot, period: Period): Promise<ServerDays | null> {
  const startOffset = await offsetNear(snapshot, period.start);
  const endOffset = await offsetNear(snapshot, period.end - 1);
  if (startOffset === null || endOffset === null) return null;
  return { first: boundAt(period.start, startOffset), last: boundAt(period.end - 1, endOffset) };
}

/** `UTC+02:00` */
export function offsetText(offsetMinutes: number): string {
  const abs = Math.abs(offsetMinutes);
  return `UTC${offsetMinutes < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/**
 * The report's query parameters for `[start, end)`: the review rules of ./reviews.ts and the server days
 * the period overlaps. One definition, so that `check` asks exactly what the report asks.
 */
export function reportParamsFor(
  range: { start: number; end: number; days: ReportParams["days"] },
  actionTypes: readonly string[] | null,
  serverDays: ServerDays | null,
): ReportParams {
  return {
    start: range.start,
    end: range.end,
    actionTypes,
    days: range.days,
    rejects: REJECTION_ACTION_TYPES,
    exempt: REVIEW_EXEMPT_ACTION_TYPES,
    flows: REVIEW_FLOWS,
    reviewWindow: REVIEW_WINDOW_MS,
    serverFromDay: serverDays?.first.day ?? null,
    serverToDay: serverDays?.last.day ?? null,
  };
}
