// Renders instants the way the service does (Date#toDateString/toTimeString, or the spec's long
// form) in a configurable zone. Node's Date only knows the process zone, so the offset and zone name
// come from Intl; both are cached per 15-minute bucket because every real DST transition of the
// simulated years falls on a quarter hour, and 1M records must render fast.
export type DateStyle = "short" | "long";

const BUCKET_MS = 15 * 60_000;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

interface ZoneFacts {
  /** Minutes east of UTC. */
  offsetMinutes: number;
  /** e.g. "Pacific Daylight Time". */
  zoneName: string;
}

export interface LocalParts {
  year: number;
  /** 1–12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Sunday */
  weekday: number;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

export class ZonedClock {
  private readonly facts = new Map<number, ZoneFacts>();
  private readonly dayStarts = new Map<string, number>();
  private readonly wallFormat: Intl.DateTimeFormat;
  private readonly nameFormat: Intl.DateTimeFormat;

  constructor(
    readonly timeZone: string,
    readonly dateStyle: DateStyle = "short",
  ) {
    // Throws a RangeError for an unknown zone: callers validate with isValidTimeZone first.
    this.wallFormat = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    this.nameFormat = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "long" });
  }

  private zoneFacts(at: number): ZoneFacts {
    const bucket = Math.floor(at / BUCKET_MS);
    let facts = this.facts.get(bucket);
    if (facts === undefined) {
      const start = bucket * BUCKET_MS;
      const parts: Record<string, number> = {};
      for (const part of this.wallFormat.formatToParts(start)) {
        if (part.type !== "literal") parts[part.type] = Number(part.value);
      }
      const wall = Date.UTC(
        parts.year!,
        parts.month! - 1,
        parts.day!,
        parts.hour! % 24,
        parts.minute!,
        parts.second!,
      );
      const nameText = this.nameFormat.formatToParts(start).find((p) => p.type === "timeZoneName");
      facts = { offsetMinutes: Math.round((wall - start) / MINUTE_MS), zoneName: nameText?.value ?? "" };
      this.facts.set(bucket, facts);
    }
    return facts;
  }

  offsetMinutes(at: number): number {
    return this.zoneFacts(at).offsetMinutes;
  }

  localParts(at: number): LocalParts {
    const shifted = new Date(at + this.zoneFacts(at).offsetMinutes * MINUTE_MS);
    return {
      year: shifted.getUTCFullYear(),
      month: shifted.getUTCMonth() + 1,
      day: shifted.getUTCDate(),
      hour: shifted.getUTCHours(),
      minute: shifted.getUTCMinutes(),
      second: shifted.getUTCSeconds(),
      weekday: shifted.getUTCDay(),
    };
  }

  /** YYYY-MM-DD of the local calendar day of an instant. */
  localDay(at: number): string {
    const p = this.localParts(at);
    return `${p.year}-${pad2(p.month)}-${pad2(p.day)}`;
  }

  /** `Mon Sep 26 2022` or `Monday, September 26, 2022`. */
  formatDate(at: number): string {
    const p = this.localParts(at);
    const weekday = WEEKDAYS[p.weekday]!;
    const month = MONTHS[p.month - 1]!;
    if (this.dateStyle === "long") return `${weekday}, ${month} ${p.day}, ${p.year}`;
    return `${weekday.slice(0, 3)} ${month.slice(0, 3)} ${pad2(p.day)} ${p.year}`;
  }

  /** `23:46:14 GMT+0000 (Coordinated Universal Time)` or `11:46:14 PM GMT-0700 (Pacific Daylight Time)`. */
  formatTime(at: number): string {
    const facts = this.zoneFacts(at);
    const p = this.localParts(at);
    const abs = Math.abs(facts.offsetMinutes);
    const offset = `GMT${facts.offsetMinutes < 0 ? "-" : "+"}${pad2(Math.floor(abs / 60))}${pad2(abs % 60)}`;
    const clock =
      this.dateStyle === "long"
        ? `${p.hour % 12 === 0 ? 12 : p.hour % 12}:${pad2(p.minute)}:${pad2(p.second)} ${p.hour < 12 ? "AM" : "PM"}`
        : `${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`;
    return `${clock} ${offset} (${facts.zoneName})`;
  }

  /**
   * First instant of a local calendar day (YYYY-MM-DD). Found by binary search over minutes, which
   * stays right on days that start at 01:00 because midnight was skipped by a DST jump.
   */
  startOfDay(day: string): number {
    let start = this.dayStarts.get(day);
    if (start !== undefined) return start;
    const [y, m, d] = day.split("-").map(Number) as [number, number, number];
    const utcMidnight = Date.UTC(y, m - 1, d);
    let lo = Math.floor((utcMidnight - DAY_MS) / MINUTE_MS);
    let hi = Math.floor((utcMidnight + DAY_MS) / MINUTE_MS);
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.localDay(mid * MINUTE_MS) < day) lo = mid + 1;
      else hi = mid;
    }
    start = lo * MINUTE_MS;
    this.dayStarts.set(day, start);
    return start;
  }
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** YYYY-MM-DD shifted by whole calendar days (no zone involved). */
export function addDays(day: string, days: number): string {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d) + days * DAY_MS).toISOString().slice(0, 10);
}

/** A real YYYY-MM-DD calendar date (rejects 2024-02-30). */
export function isCalendarDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  return addDays(text, 0) === text;
}
