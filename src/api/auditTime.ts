// Turns an audit log record's `date` + `time` texts into an instant. The service writes them with
// JavaScript's Date#toDateString()/toTimeString() in its own zone (or the spec's long form), so the
// offset inside the time text is the only authority: never UTC by assumption, never the process zone.
import { createRequire } from "node:module";

/**
 * date-fns, loaded the first time a text is not in toDateString's form (read by hand below): a sync of
 * such records never needs it, and its ~90 modules cost 0.1–0.3 s at every start. One module per
 * function: the date-fns index loads all ~250 of them.
 */
let dateFns:
  | {
      format: typeof import("date-fns/format").format;
      isValid: typeof import("date-fns/isValid").isValid;
      parse: typeof import("date-fns/parse").parse;
      // All date-fns work happens in UTC so the process's zone cannot leak into the fields.
      inUtc: ReturnType<typeof import("@date-fns/tz").tz>;
    }
  | undefined;

function loadDateFns(): NonNullable<typeof dateFns> {
  if (dateFns === undefined) {
    const require = createRequire(import.meta.url);
    const { tz } = require("@date-fns/tz") as typeof import("@date-fns/tz");
    dateFns = {
      format: (require("date-fns/format") as typeof import("date-fns/format")).format,
      isValid: (require("date-fns/isValid") as typeof import("date-fns/isValid")).isValid,
      parse: (require("date-fns/parse") as typeof import("date-fns/parse")).parse,
      inUtc: tz("UTC"),
    };
  }
  return dateFns;
}

export interface ParsedAuditTime {
  /** The instant, epoch milliseconds UTC. */
  occurredAt: number;
  /** YYYY-MM-DD of the record's own date text: the server's local calendar day. */
  serverDay: string;
  /** Offset of the server's zone from UTC at that instant, in minutes (east positive). */
  offsetMinutes: number;
}

const REFERENCE = new Date(0);

/** `Mon Sep 26 2022` (toDateString) and `Monday, September 26, 2022` (the spec's long form). */
const DATE_FORMATS = ["EEE MMM d yyyy", "EEEE, MMMM d, yyyy"] as const;

// Clock, then `GMT±hhmm` (a colon is tolerated), then an optional zone name in parentheses whose
// content is free text (it is localised and sometimes absent).
const TIME_PATTERN =
  /^(\d{1,2}:\d{2}:\d{2}(?: ?[AaPp]\.?[Mm]\.?)?) ?(?:GMT|UTC) ?([+-])(\d{2}):?(\d{2})(?: ?\(.*\))?$/;

/**
 * Exactly what Date#toTimeString() writes, `23:46:14 GMT-0700 (Pacific Daylight Time)`, which
 * TIME_PATTERN reads the same after normalizeSpaces, with the same groups: a record's time text is
 * nearly always this.
 */
const TO_TIME_STRING = /^(\d{2}:\d{2}:\d{2}) GMT([+-])(\d{2})(\d{2})(?: \(.*\))?$/;

// The clock part, after dots are removed and letters upper-cased: `23:46:14` (toTimeString) or
// `11:46:14 PM` (12-hour clock, one space before the period). Parsed by hand rather than with
// date-fns: it runs once per record and date-fns' parse cost ~0.3 ms a call.
const CLOCK_PATTERN = /^(\d{1,2}):(\d{2}):(\d{2})(?: ([AP])M)?$/;

/** Largest real offsets are +14:00 (Kiribati) and -12:00; anything beyond is not a zone. */
const MAX_OFFSET_MINUTES = 14 * 60;

/**
 * Date texts repeat for every record of a day (hundreds to thousands), so their parse is cached.
 * Bounded: a sync over years of history meets one text per day, and oldest entries go first.
 */
export const DATE_CACHE_LIMIT = 4096;

interface ServerDay {
  /** Midnight of the day, as if the server's zone were UTC. */
  midnight: number;
  /** YYYY-MM-DD */
  day: string;
}

const dateCache = new Map<string, ServerDay | null>();

// Intl output uses narrow/no-break spaces before AM/PM; collapse all whitespace to one space.
function normalizeSpaces(text: string): string {
  return text.replace(/[\s\u00a0\u202f]+/g, " ").trim();
}

function parseFirst(text: string, formats: readonly string[]): Date | null {
  const { parse, isValid, inUtc } = loadDateFns();
  for (const pattern of formats) {
    const parsed = parse(text, pattern, REFERENCE, { in: inUtc });
    if (isValid(parsed)) return parsed;
  }
  return null;
}

/**
 * The calendar day of a date text, or null. date-fns ignores a weekday that contradicts the date,
 * so it is checked here: a contradiction means the text is not what we think it is.
 */
function parseServerDay(dateText: string): ServerDay | null {
  const text = normalizeSpaces(dateText);
  const exact = parseDateString(text);
  if (exact !== undefined) return exact;
  const day = parseFirst(text, DATE_FORMATS);
  if (day === null) return null;
  const weekday = /^[A-Za-z]+/.exec(text)?.[0]?.toLowerCase();
  const expected = weekday !== undefined && weekday.length > 3 ? "EEEE" : "EEE";
  const { format, inUtc } = loadDateFns();
  if (format(day, expected, { in: inUtc }).toLowerCase() !== weekday) return null;
  return { midnight: day.getTime(), day: format(day, "yyyy-MM-dd", { in: inUtc }) };
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/** Exactly what Date#toDateString() writes for years 1000–9999: `Mon Sep 26 2022`. */
const DATE_STRING =
  /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{2}) ([1-9]\d{3})$/;

/**
 * The day of a text in toDateString's exact form, read by hand: date-fns' parse and format cost
 * ~0.4–0.7 ms a call, once per day of history a sync meets. Undefined for any other text (or a date
 * that does not exist): parseServerDay then asks date-fns, which decides every other case.
 */
function parseDateString(text: string): ServerDay | null | undefined {
  const match = DATE_STRING.exec(text);
  if (match === null) return undefined;
  const [, weekday, monthText, dayText, yearText] = match;
  const month = MONTHS.indexOf(monthText ?? "");
  const midnight = Date.UTC(Number(yearText), month, Number(dayText));
  const date = new Date(midnight);
  if (date.getUTCMonth() !== month || date.getUTCDate() !== Number(dayText)) return undefined;
  // A weekday that contradicts the date: the text is not what we think it is (as below).
  if (WEEKDAYS[date.getUTCDay()] !== weekday) return null;
  return { midnight, day: `${yearText}-${String(month + 1).padStart(2, "0")}-${dayText}` };
}

function cachedServerDay(dateText: string): ServerDay | null {
  const cached = dateCache.get(dateText);
  if (cached !== undefined) return cached;
  const parsed = parseServerDay(dateText);
  if (dateCache.size >= DATE_CACHE_LIMIT) {
    const oldest = dateCache.keys().next();
    if (oldest.done !== true) dateCache.delete(oldest.value);
  }
  dateCache.set(dateText, parsed);
  return parsed;
}

/** How many date texts are cached now (for tests of the bound). */
export function dateCacheSize(): number {
  return dateCache.size;
}

/** Milliseconds since midnight of a clock text, or null when it is not a valid time of day. */
function clockMillis(clockText: string): number | null {
  // `23:46:14`, as toTimeString writes it, has nothing to remove or upper-case.
  const plain = clockText.length === 8 ? clockText : clockText.replace(/\./g, "").toUpperCase();
  const match = CLOCK_PATTERN.exec(plain);
  if (match === null) return null;
  let hours = Number(match[1]);
  const minutes = Number(match[2]);
  const seconds = Number(match[3]);
  if (minutes > 59 || seconds > 59) return null;
  const period = match[4];
  if (period === undefined) {
    if (hours > 23) return null;
  } else {
    // 12-hour clock: 12 AM is midnight, 12 PM is noon, 0 and 13+ do not exist.
    if (hours < 1 || hours > 12) return null;
    hours = (hours % 12) + (period === "P" ? 12 : 0);
  }
  return ((hours * 60 + minutes) * 60 + seconds) * 1000;
}

/**
 * Parses an audit record's `date` and `time` texts. Returns null when either is unparseable or they
 * carry no explicit offset; the caller stores NULL and counts a warning.
 */
export function parseAuditTime(dateText: string, timeText: string): ParsedAuditTime | null {
  const day = cachedServerDay(dateText);
  if (day === null) return null;

  // toTimeString's own form, read without normalising (what normalising changes is in the zone name).
  const match = TO_TIME_STRING.exec(timeText) ?? TIME_PATTERN.exec(normalizeSpaces(timeText));
  if (match === null) return null;
  const [, clockText, sign, hourText, minuteText] = match;
  if (clockText === undefined || sign === undefined || hourText === undefined || minuteText === undefined) {
    return null;
  }
  const clock = clockMillis(clockText);
  if (clock === null) return null;

  const offsetHours = Number(hourText);
  const offsetMins = Number(minuteText);
  if (offsetMins >= 60) return null;
  const magnitude = offsetHours * 60 + offsetMins;
  if (magnitude > MAX_OFFSET_MINUTES) return null;
  // `-0000` is the same zone as `+0000`; avoid handing callers a negative zero.
  const offsetMinutes = magnitude === 0 ? 0 : sign === "-" ? -magnitude : magnitude;

  // Wall-clock fields of the server's zone, as if they were UTC, then shifted by the offset.
  return {
    occurredAt: day.midnight + clock - offsetMinutes * 60_000,
    serverDay: day.day,
    offsetMinutes,
  };
}
