// Calendar days as YYYY-MM-DD strings. The API's startDate/endDate are days in the server's zone, so
// days are handled as plain dates (UTC arithmetic, no local zone) and never as instants.
const DAY_MS = 86_400_000;
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Epoch ms of the day's UTC midnight, or null when the text is not a real calendar day. */
export function dayToUtcMs(day: string): number | null {
  const match = DAY_PATTERN.exec(day);
  if (!match) return null;
  const [, y, m, d] = match;
  const ms = Date.UTC(Number(y), Number(m) - 1, Number(d));
  // Date.UTC rolls 2024-02-30 over to March: reject days that do not round-trip.
  return utcMsToDay(ms) === day ? ms : null;
}

export function isDay(text: string): boolean {
  return dayToUtcMs(text) !== null;
}

function utcMsToDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function mustParse(day: string): number {
  const ms = dayToUtcMs(day);
  if (ms === null) throw new RangeError(`not a YYYY-MM-DD day: ${day}`);
  return ms;
}

export function addDays(day: string, count: number): string {
  return utcMsToDay(mustParse(day) + count * DAY_MS);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((mustParse(to) - mustParse(from)) / DAY_MS);
}

/** Every day from `since` to `until`, both included. */
export function eachDay(since: string, until: string): string[] {
  const days: string[] = [];
  for (let day = since; day <= until; day = addDays(day, 1)) days.push(day);
  return days;
}

export function todayUtc(now: number = Date.now()): string {
  return utcMsToDay(now);
}

/**
 * The default last day of a sync: the UTC date plus one. A server east of UTC is already on the next
 * day between its midnight and UTC's, and that day must be read; the API accepts an endDate in the
 * future, and coverage marks such a day open, not complete.
 */
export function defaultUntil(now: number = Date.now()): string {
  return addDays(todayUtc(now), 1);
}

/** The westernmost real offset (UTC-12): a day has surely ended everywhere this long after UTC midnight. */
const WESTMOST_OFFSET_MINUTES = -12 * 60;
/**
 * Slack after the computed end of a server day before it counts as closed: a DST change during the
 * day moves its end by an hour, and a record stamped 23:59:59 may reach the list a little later.
 */
const DAY_CLOSE_MARGIN_MS = 3_600_000;

/**
 * Whether the server day `day` had ended at instant `at`. `offsetMinutes` is the server zone's offset
 * from UTC (east positive) as seen in its records' time texts; unknown → the westernmost offset.
 */
export function serverDayClosed(day: string, at: number, offsetMinutes: number | null): boolean {
  const nextMidnightAsUtc = mustParse(addDays(day, 1));
  const offset = offsetMinutes ?? WESTMOST_OFFSET_MINUTES;
  return at >= nextMidnightAsUtc - offset * 60_000 + DAY_CLOSE_MARGIN_MS;
}
