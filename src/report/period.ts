// The report period: calendar days from..to interpreted in a time zone, as epoch-ms bounds, plus time
// formatting in that zone. Offsets are looked up per 15-minute bucket (every zone changes offset on
// such a boundary), so formatting a million rows does not call Intl a million times.
import { TZDate, tzOffset } from "@date-fns/tz";
import { SettingError } from "../errors.ts";

interface PeriodDay {
  /** YYYY-MM-DD in the report's zone. */
  day: string;
  /** Epoch ms of the day's first instant. */
  start: number;
  /** Epoch ms of the next day's first instant (exclusive). */
  end: number;
}

export interface Period {
  from: string;
  to: string;
  timeZone: string;
  /** Inclusive lower bound, epoch ms. */
  start: number;
  /** Exclusive upper bound, epoch ms. */
  end: number;
  days: PeriodDay[];
}

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseDay(text: string, setting: "start day" | "end day"): { y: number; m: number; d: number } {
  const match = DAY_PATTERN.exec(text);
  if (match) {
    const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
    const probe = new Date(Date.UTC(y, m - 1, d));
    if (probe.getUTCFullYear() === y && probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d)
      return { y, m, d };
  }
  throw new SettingError(
    setting,
    `The ${setting} ${JSON.stringify(text)} is not a calendar day (YYYY-MM-DD).`,
  );
}

/**
 * The zone's canonical name (`utc` → `UTC`, `europe/berlin` → `Europe/Berlin`): a report names its files
 * and manifest by it, so two spellings of one zone make one set of files.
 */
export function canonicalTimeZone(timeZone: string): string {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone }).resolvedOptions().timeZone;
  } catch {
    throw new SettingError(
      "time zone",
      `The time zone ${JSON.stringify(timeZone)} is unknown: use an IANA name like Europe/Berlin.`,
    );
  }
}

function localDay(epochMs: number, timeZone: string): string {
  return new Date(epochMs + tzOffset(timeZone, new Date(epochMs)) * 60_000).toISOString().slice(0, 10);
}

/**
 * The first instant of a calendar day in a zone. Where local midnight does not exist (DST starting at
 * 00:00, as in Cairo, Beirut or Tehran), TZDate resolves it backwards into the previous day for zones
 * east of UTC; then the day starts at the transition, found by a binary search over whole minutes
 * (offsets change on minute boundaries).
 */
function startOfDay(y: number, m: number, d: number, timeZone: string): number {
  const candidate = new TZDate(y, m - 1, d, timeZone).getTime();
  const day = `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
  if (localDay(candidate, timeZone) >= day) return candidate;
  // candidate is in the previous day; the gap is at most a few hours.
  let low = Math.floor(candidate / 60_000); // minute known to be before the day
  let high = low + 6 * 60; // minute known to be in the day (or later)
  while (localDay(high * 60_000, timeZone) < day) high += 6 * 60;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (localDay(mid * 60_000, timeZone) < day) low = mid;
    else high = mid;
  }
  return high * 60_000;
}

export function resolvePeriod(from: string, to: string, zone = "UTC"): Period {
  const timeZone = canonicalTimeZone(zone);
  const a = parseDay(from, "start day");
  const b = parseDay(to, "end day");
  if (from > to) throw new SettingError("period", `The start day ${from} is after the end day ${to}.`);
  const days: PeriodDay[] = [];
  const cursor = new Date(Date.UTC(a.y, a.m - 1, a.d));
  const last = Date.UTC(b.y, b.m - 1, b.d);
  while (cursor.getTime() <= last) {
    const y = cursor.getUTCFullYear();
    const m = cursor.getUTCMonth() + 1;
    const d = cursor.getUTCDate();
    const next = new Date(cursor.getTime() + 86_400_000);
    days.push({
      day: cursor.toISOString().slice(0, 10),
      start: startOfDay(y, m, d, timeZone),
      end: startOfDay(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone),
    });
    cursor.setTime(next.getTime());
  }
  return { from, to, timeZone, start: days[0]!.start, end: days[days.length - 1]!.end, days };
}

const BUCKET_MS = 15 * 60_000;
/**
 * Offsets are looked up at the ends of 6-hour spans first: a zone's transitions are weeks apart, never
 * two within one span, so a span whose ends have the same offset has it throughout and only a span with
 * a transition is looked up per bucket: ~4 lookups a day instead of 96 (each ~30 µs of Intl, a tenth
 * of the CPU of a one-month 1M-record report's CSVs).
 */
const SPAN_MS = 6 * 3_600_000;

const DAY_MS = 86_400_000;
/** 0000-01-01 and 10000-01-01 UTC: toISOString writes years outside as ±YYYYYY. */
const FOUR_DIGIT_YEARS = [-62_167_219_200_000, 253_402_300_800_000] as const;

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function offsetSuffix(minutes: number): string {
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/**
 * Formats epoch ms as ISO 8601 to the second with the zone's offset, e.g. 2024-03-31T03:00:00+02:00: the
 * one format of every time in a report's CSVs, Markdown and HTML. Milliseconds are cut (not rounded: a
 * time stays in its second, and its day): the audit log's times are whole seconds, and a column whose
 * clock times (reads, checks, waivers) had them only when not .000 had two widths. A CSV's epoch_ms
 * keeps a record's exact time. A report formats every row's time: the date part is built once per local
 * day and the clock from the remainder, a few times cheaper than a Date and toISOString per call. Anything unusual (an offset with seconds, a year
 * beyond four digits) takes the plain path.
 */
export function isoFormatter(timeZone: string): (epochMs: number) => string {
  const offsets = new Map<number, { minutes: number; suffix: string }>();
  const spans = new Map<number, number>();
  const days = new Map<number, string>();
  const atSpan = (span: number) => {
    let minutes = spans.get(span);
    if (minutes === undefined) {
      minutes = tzOffset(timeZone, new Date(span * SPAN_MS));
      spans.set(span, minutes);
    }
    return minutes;
  };
  return (exactMs: number) => {
    const epochMs = Math.floor(exactMs / 1000) * 1000;
    const bucket = Math.floor(epochMs / BUCKET_MS);
    let offset = offsets.get(bucket);
    if (offset === undefined) {
      const span = Math.floor((bucket * BUCKET_MS) / SPAN_MS);
      const start = atSpan(span);
      const minutes = start === atSpan(span + 1) ? start : tzOffset(timeZone, new Date(bucket * BUCKET_MS));
      offset = { minutes, suffix: offsetSuffix(minutes) };
      offsets.set(bucket, offset);
    }
    const local = epochMs + offset.minutes * 60_000;
    if (!Number.isInteger(local) || local < FOUR_DIGIT_YEARS[0] || local >= FOUR_DIGIT_YEARS[1]) {
      return `${new Date(local).toISOString().slice(0, 19)}${offset.suffix}`;
    }
    const day = Math.floor(local / DAY_MS);
    let date = days.get(day);
    if (date === undefined) {
      date = new Date(day * DAY_MS).toISOString().slice(0, 11);
      days.set(day, date);
    }
    const inDay = local - day * DAY_MS;
    const seconds = Math.floor(inDay / 1000);
    const clock = `${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
    return `${date}${clock}${offset.suffix}`;
  };
}
