// The report period a scheduled run covers: the previous complete day, ISO week or month, as calendar
// days in the report's zone (a nightly run at 02:00 Europe/Berlin reports Berlin's yesterday).
import { addDays, dayToUtcMs } from "../sync/days.ts";

export type ReportCadence = "daily" | "weekly" | "monthly";

export interface ReportPeriod {
  from: string;
  to: string;
}

/** Today's calendar day (YYYY-MM-DD) in `timeZone`. */
export function todayIn(timeZone: string, now: number = Date.now()): string {
  // en-CA formats as YYYY-MM-DD.
  return new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(now);
}

export function previousPeriod(cadence: ReportCadence, today: string): ReportPeriod {
  switch (cadence) {
    case "daily": {
      const yesterday = addDays(today, -1);
      return { from: yesterday, to: yesterday };
    }
    case "weekly": {
      // ISO weeks start on Monday; getUTCDay() is 0 for Sunday.
      const weekday = (new Date(dayToUtcMs(today) ?? 0).getUTCDay() + 6) % 7;
      const thisMonday = addDays(today, -weekday);
      return { from: addDays(thisMonday, -7), to: addDays(thisMonday, -1) };
    }
    case "monthly": {
      const firstOfThisMonth = `${today.slice(0, 7)}-01`;
      const lastOfPrevious = addDays(firstOfThisMonth, -1);
      return { from: `${lastOfPrevious.slice(0, 7)}-01`, to: lastOfPrevious };
    }
  }
}

/** The last complete calendar month before `today` (the demo's report period). */
export function lastCompleteMonth(today: string): ReportPeriod {
  return previousPeriod("monthly", today);
}
