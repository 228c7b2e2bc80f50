import { tz } from "@date-fns/tz";
import { format } from "date-fns/format";
import { parse } from "date-fns/parse";
import { afterEach, describe, expect, it } from "vitest";
import { DATE_CACHE_LIMIT, dateCacheSize, parseAuditTime } from "../../src/api/auditTime.ts";
import { utcDateText } from "../helpers/auditRecords.ts";

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

describe("parseAuditTime: table of samples", () => {
  const cases: Array<[date: string, time: string, instant: string, serverDay: string, offset: number]> = [
    // The service's own samples (toDateString/toTimeString).
    [
      "Mon Sep 26 2022",
      "23:46:14 GMT+0000 (Coordinated Universal Time)",
      "2022-09-26T23:46:14.000Z",
      "2022-09-26",
      0,
    ],
    [
      "Wed Jul 12 2023",
      "10:44:27 GMT-0700 (Pacific Daylight Time)",
      "2023-07-12T17:44:27.000Z",
      "2023-07-12",
      -420,
    ],
    // Long form with a 12-hour clock.
    [
      "Monday, September 26, 2022",
      "11:46:14 PM GMT-0700 (Pacific Daylight Time)",
      "2022-09-27T06:46:14.000Z",
      "2022-09-26",
      -420,
    ],
    ["Monday, September 26, 2022", "12:05:00 AM GMT+0000 (UTC)", "2022-09-26T00:05:00.000Z", "2022-09-26", 0],
    ["Monday, September 26, 2022", "12:05:00 PM GMT+0000", "2022-09-26T12:05:00.000Z", "2022-09-26", 0],
    // Either clock with either date form.
    ["Mon Sep 26 2022", "1:02:03 pm GMT+0200 (CEST)", "2022-09-26T11:02:03.000Z", "2022-09-26", 120],
    ["Monday, September 26, 2022", "13:02:03 GMT+0200", "2022-09-26T11:02:03.000Z", "2022-09-26", 120],
    // Fractional and extreme offsets.
    [
      "Sat Jan 14 2023",
      "09:15:00 GMT+0530 (India Standard Time)",
      "2023-01-14T03:45:00.000Z",
      "2023-01-14",
      330,
    ],
    [
      "Sat Jan 14 2023",
      "09:15:00 GMT+1345 (Chatham Daylight Time)",
      "2023-01-13T19:30:00.000Z",
      "2023-01-14",
      825,
    ],
    ["Sat Jan 14 2023", "09:15:00 GMT-0930 (Marquesas Time)", "2023-01-14T18:45:00.000Z", "2023-01-14", -570],
    [
      "Sat Jan 14 2023",
      "09:15:00 GMT+14:00 (Line Islands Time)",
      "2023-01-13T19:15:00.000Z",
      "2023-01-14",
      840,
    ],
    ["Sat Jan 14 2023", "09:15:00 GMT-0000", "2023-01-14T09:15:00.000Z", "2023-01-14", 0],
    // The DST-switch night in America/Los_Angeles: 01:30 happens twice, the offset tells which.
    [
      "Sun Nov 06 2022",
      "01:30:00 GMT-0700 (Pacific Daylight Time)",
      "2022-11-06T08:30:00.000Z",
      "2022-11-06",
      -420,
    ],
    [
      "Sun Nov 06 2022",
      "01:30:00 GMT-0800 (Pacific Standard Time)",
      "2022-11-06T09:30:00.000Z",
      "2022-11-06",
      -480,
    ],
    ["Sunday, March 13, 2022", "03:00:00 AM GMT-0700 (PDT)", "2022-03-13T10:00:00.000Z", "2022-03-13", -420],
    [
      "Sun Mar 13 2022",
      "01:59:59 GMT-0800 (Pacific Standard Time)",
      "2022-03-13T09:59:59.000Z",
      "2022-03-13",
      -480,
    ],
    // The UTC date differs from the server's date, both ways; serverDay is the text's own day.
    [
      "Sat Dec 31 2022",
      "23:30:00 GMT-0500 (Eastern Standard Time)",
      "2023-01-01T04:30:00.000Z",
      "2022-12-31",
      -300,
    ],
    [
      "Sun Jan 01 2023",
      "00:30:00 GMT+0900 (Japan Standard Time)",
      "2022-12-31T15:30:00.000Z",
      "2023-01-01",
      540,
    ],
    // Leap day, unpadded day, zone names that are missing, empty, localised or odd.
    [
      "Thu Feb 29 2024",
      "12:00:00 GMT+0100 (Mitteleuropäische Normalzeit)",
      "2024-02-29T11:00:00.000Z",
      "2024-02-29",
      60,
    ],
    ["Tue Sep 6 2022", "00:00:00 GMT+0000 ()", "2022-09-06T00:00:00.000Z", "2022-09-06", 0],
    ["Tue Sep 06 2022", "00:00:00 GMT+0000 (a (nested) name)", "2022-09-06T00:00:00.000Z", "2022-09-06", 0],
    // Intl's narrow no-break space before PM, and stray spacing.
    [
      "  Monday,  September 26, 2022 ",
      "11:46:14\u202fPM  GMT-0700",
      "2022-09-27T06:46:14.000Z",
      "2022-09-26",
      -420,
    ],
  ];

  it.each(cases)("%s + %s", (date, time, instant, serverDay, offset) => {
    const parsed = parseAuditTime(date, time);
    expect(parsed).not.toBeNull();
    expect(iso(parsed?.occurredAt)).toBe(instant);
    expect(parsed?.serverDay).toBe(serverDay);
    expect(parsed?.offsetMinutes).toBe(offset);
  });
});

describe("parseAuditTime: garbage", () => {
  const garbage: Array<[string, string]> = [
    ["", ""],
    ["Mon Sep 26 2022", ""],
    ["", "23:46:14 GMT+0000"],
    ["Mon Sep 26 2022", "23:46:14"], // no offset: never assume UTC
    ["Mon Sep 26 2022", "23:46:14 (Coordinated Universal Time)"],
    ["Mon Sep 26 2022", "23:46:14 GMT+0000 trailing"],
    ["Mon Sep 26 2022", "24:00:00 GMT+0000"],
    ["Mon Sep 26 2022", "23:60:00 GMT+0000"],
    ["Mon Sep 26 2022", "13:00:00 PM GMT+0000"],
    ["Mon Sep 26 2022", "23:46:14 GMT+1500"],
    ["Mon Sep 26 2022", "23:46:14 GMT+0575"],
    ["Mon Sep 26 2022", "23:46 GMT+0000"],
    ["Tue Sep 26 2022", "23:46:14 GMT+0000"], // weekday contradicts the date
    ["Mon Feb 30 2022", "23:46:14 GMT+0000"],
    ["2022-09-26", "23:46:14 GMT+0000"],
    ["Sep 26 2022", "23:46:14 GMT+0000"],
    ["Mon Sep 26 2022 extra", "23:46:14 GMT+0000"],
    ["Invalid Date", "Invalid Date"],
    ["Monday September 26 2022", "23:46:14 GMT+0000"],
    ["Mon Sep 26 2022", "2022-09-26T23:46:14Z"],
  ];

  it.each(garbage)("%j + %j is null", (date, time) => {
    expect(parseAuditTime(date, time)).toBeNull();
  });
});

describe("parseAuditTime: round trip with JavaScript's own Date strings", () => {
  const originalTz = process.env.TZ;
  afterEach(() => {
    process.env.TZ = originalTz;
    if (originalTz === undefined) delete process.env.TZ;
  });

  // Node honours a TZ change at run time, so Date#toDateString/toTimeString produce exactly what a
  // server in that zone sends. Instants step across DST switches and day boundaries.
  const zones = [
    "America/Los_Angeles",
    "Asia/Kolkata",
    "Pacific/Chatham",
    "Pacific/Marquesas",
    "Australia/Lord_Howe",
    "UTC",
  ];
  const start = Date.UTC(2022, 2, 12, 0, 0, 0);
  const stepMs = 37 * 60_000 + 13_000; // odd step so that many clock values are visited
  const instants = Array.from({ length: 600 }, (_, i) => start + i * stepMs);
  instants.push(Date.UTC(2022, 10, 6, 8, 30), Date.UTC(2022, 10, 6, 9, 30), Date.UTC(2022, 3, 2, 15, 0));

  it.each(zones)("server in %s", (zone) => {
    process.env.TZ = zone;
    // Every instant's reading against what it must be, as one comparison (one expect per value was
    // 2,400 expect calls a zone).
    const read = instants.map((instant) => {
      const when = new Date(instant);
      const text = `${when.toDateString()} ${when.toTimeString()}`;
      const parsed = parseAuditTime(when.toDateString(), when.toTimeString());
      return parsed === null
        ? { text, parsed }
        : {
            text,
            occurredAt: parsed.occurredAt,
            offsetMinutes: parsed.offsetMinutes,
            serverDay: parsed.serverDay,
          };
    });
    const expected = instants.map((instant) => {
      const when = new Date(instant);
      const localDay = `${when.getFullYear()}-${String(when.getMonth() + 1).padStart(2, "0")}-${String(when.getDate()).padStart(2, "0")}`;
      return {
        text: `${when.toDateString()} ${when.toTimeString()}`,
        occurredAt: instant,
        offsetMinutes: 0 - when.getTimezoneOffset() || 0,
        serverDay: localDay,
      };
    });
    expect(read).toEqual(expected);
  });

  it("does not depend on the process zone", () => {
    const results = ["Asia/Tokyo", "America/Los_Angeles", "Europe/London"].map((zone) => {
      process.env.TZ = zone;
      return parseAuditTime("Sun Nov 06 2022", "01:30:00 GMT-0800 (Pacific Standard Time)");
    });
    for (const result of results) expect(iso(result?.occurredAt)).toBe("2022-11-06T09:30:00.000Z");
  });
});

describe("parseAuditTime: toDateString texts read by hand", () => {
  // The exact toDateString form skips date-fns (it cost ~0.5 ms a day of history): the same day as
  // date-fns' own parse of the same text, over every day of a leap year and days of years 1000–9999.
  it("agrees with date-fns", () => {
    const utc = tz("UTC");
    const days: number[] = [];
    for (let d = Date.UTC(2024, 0, 1); d < Date.UTC(2025, 0, 1); d += 86_400_000) days.push(d);
    for (let d = Date.UTC(1000, 0, 1); d < Date.UTC(9999, 11, 31); d += 1009 * 86_400_000) days.push(d);
    const read: { text: string; occurredAt?: number; serverDay?: string }[] = [];
    const byDateFns: typeof read = [];
    for (const day of days) {
      const text = format(day, "EEE MMM dd yyyy", { in: utc });
      const parsedByDateFns = parse(text, "EEE MMM d yyyy", new Date(0), { in: utc });
      const parsed = parseAuditTime(text, "00:00:00 GMT+0000");
      read.push({ text, occurredAt: parsed?.occurredAt, serverDay: parsed?.serverDay });
      byDateFns.push({
        text,
        occurredAt: parsedByDateFns.getTime(),
        serverDay: format(parsedByDateFns, "yyyy-MM-dd", { in: utc }),
      });
    }
    // One comparison over every day (two expect calls a day were 7,000).
    expect(read).toEqual(byDateFns);
  });
});

describe("parseAuditTime: date text cache", () => {
  it("answers a repeated date text the same way, valid or not", () => {
    const first = parseAuditTime("Wed Jul 12 2023", "10:44:27 GMT-0700 (Pacific Daylight Time)");
    const again = parseAuditTime("Wed Jul 12 2023", "10:44:27 GMT-0700 (Pacific Daylight Time)");
    expect(again).toEqual(first);
    expect(iso(again?.occurredAt)).toBe("2023-07-12T17:44:27.000Z");
    // Same cached day, another clock: the clock is never cached with the day.
    expect(iso(parseAuditTime("Wed Jul 12 2023", "11:00:00 PM GMT+0000")?.occurredAt)).toBe(
      "2023-07-12T23:00:00.000Z",
    );
    for (let i = 0; i < 2; i++) expect(parseAuditTime("Tue Sep 26 2022", "23:46:14 GMT+0000")).toBeNull();
  });

  it("stays bounded and still parses dates it evicted", () => {
    const day = 86_400_000;
    const start = Date.UTC(2000, 0, 1);
    const count = DATE_CACHE_LIMIT + 300;
    const read: (number | undefined)[] = [];
    const expected: number[] = [];
    for (let i = 0; i < count; i++) {
      read.push(parseAuditTime(utcDateText(start + i * day), "12:00:00 GMT+0000")?.occurredAt);
      expected.push(start + i * day + 12 * 3_600_000);
    }
    expect(read).toEqual(expected);
    expect(dateCacheSize()).toBeLessThanOrEqual(DATE_CACHE_LIMIT);
    // The oldest were evicted; parsing them again gives the same answer.
    expect(parseAuditTime(utcDateText(start), "00:00:01 GMT+0100")?.occurredAt).toBe(
      start + 1000 - 3_600_000,
    );
    expect(parseAuditTime(utcDateText(start), "00:00:01 GMT+0100")?.serverDay).toBe("2000-01-01");
  });
});

describe("parseAuditTime: toTimeString's form read directly", () => {
  it("answers as the general reading does (a trailing space sends a text down that path)", () => {
    const texts = [
      "10:44:27 GMT-0700 (Pacific Daylight Time)",
      "10:44:27 GMT-0700",
      "00:00:00 GMT+0000 (Coordinated Universal Time)",
      "23:59:59 GMT+1400 (Line Islands Time)",
      "23:59:59 GMT-0000",
      "24:00:00 GMT+0000",
      "12:60:00 GMT+0000",
      "12:00:60 GMT+0000",
      "12:00:00 GMT+1401",
      "12:00:00 GMT+0160",
      "12:00:00 GMT+0100 (Mitteleuropäische  Normalzeit)",
      "12:00:00 GMT+0100 (zone\twith\u00a0odd   spaces)",
      "12:00:00 GMT+0100 ()",
      "12:00:00 GMT+0100 (a) (b)",
    ];
    for (const text of texts) {
      expect(parseAuditTime("Wed Jul 12 2023", text), text).toEqual(
        parseAuditTime("Wed Jul 12 2023", `${text} `),
      );
    }
    expect(parseAuditTime("Wed Jul 12 2023", "23:59:59 GMT+1400 (x)")?.offsetMinutes).toBe(840);
    expect(parseAuditTime("Wed Jul 12 2023", "24:00:00 GMT+0000")).toBeNull();
  });
});
