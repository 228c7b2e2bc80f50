// Day boundaries of a report period, including zones whose DST starts at local midnight.
import { tzOffset } from "@date-fns/tz";
import { describe, expect, it } from "vitest";
import { isoFormatter, resolvePeriod } from "../../src/report/period.ts";

function days(from: string, to: string, timeZone: string) {
  const format = isoFormatter(timeZone);
  return resolvePeriod(from, to, timeZone).days.map((d) => ({
    day: d.day,
    start: format(d.start),
    hours: (d.end - d.start) / 3_600_000,
  }));
}

describe("resolvePeriod day boundaries", () => {
  it.each([
    // East of UTC, DST starts at 00:00: the day starts at the transition (01:00 local), not an hour early.
    ["Africa/Cairo", "2024-04-25", "2024-04-26", "2024-04-26T01:00:00+03:00"],
    ["Asia/Beirut", "2024-03-30", "2024-03-31", "2024-03-31T01:00:00+03:00"],
    ["Asia/Damascus", "2022-03-24", "2022-03-25", "2022-03-25T01:00:00+03:00"],
    ["Asia/Tehran", "2021-03-21", "2021-03-22", "2021-03-22T01:00:00+04:30"],
    // West of UTC, same rule (already right before the fix).
    ["America/Santiago", "2024-09-07", "2024-09-08", "2024-09-08T01:00:00-03:00"],
    ["America/Havana", "2024-03-09", "2024-03-10", "2024-03-10T01:00:00-04:00"],
  ])("%s: the day before lasts 24 h, the DST day starts at 01:00", (zone, before, dstDay, dstStart) => {
    const [previous, day] = days(before, dstDay, zone);
    expect(previous).toMatchObject({ day: before, hours: 24 });
    expect(day).toMatchObject({ day: dstDay, start: dstStart, hours: 23 });
  });

  it("names the zone canonically, so two spellings of one zone make one set of report files", () => {
    expect(resolvePeriod("2024-03-30", "2024-03-31", "utc").timeZone).toBe("UTC");
    expect(resolvePeriod("2024-03-30", "2024-03-31", "europe/berlin").timeZone).toBe("Europe/Berlin");
    expect(() => resolvePeriod("2024-03-30", "2024-03-31", "Mars/Olympus")).toThrow(
      /^The time zone "Mars\/Olympus" is unknown/,
    );
  });

  it("keeps ordinary midnights and the Berlin 23-hour day", () => {
    expect(days("2024-03-30", "2024-04-01", "Europe/Berlin")).toEqual([
      { day: "2024-03-30", start: "2024-03-30T00:00:00+01:00", hours: 24 },
      { day: "2024-03-31", start: "2024-03-31T00:00:00+01:00", hours: 23 },
      { day: "2024-04-01", start: "2024-04-01T00:00:00+02:00", hours: 24 },
    ]);
  });
});

describe("isoFormatter", () => {
  /** The plain way: a Date and toISOString per call (what the formatter did before it cached days). */
  function plain(timeZone: string) {
    return (epochMs: number) => {
      const offset = tzOffset(timeZone, new Date(Math.floor(epochMs / 900_000) * 900_000));
      const local = new Date(epochMs + offset * 60_000).toISOString();
      const abs = Math.abs(offset);
      return `${local.slice(0, 19)}${offset < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
    };
  }

  it.each(["UTC", "Europe/Berlin", "America/St_Johns", "Asia/Kathmandu", "Europe/Amsterdam"])(
    "%s: writes what a Date and toISOString write, to the second: one width whatever the millis",
    (zone) => {
      const fast = isoFormatter(zone);
      const reference = plain(zone);
      const instants = [0, -1, 999, 1000, -62_167_219_200_001, 253_402_300_800_000, -2_208_988_800_000];
      let x = 7;
      for (let i = 0; i < 5000; i += 1) {
        x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
        instants.push(Math.floor((x / 2_147_483_648 - 0.3) * 5e12) + (i % 2 === 0 ? 0 : i % 1000));
      }
      const wrong = instants.filter((instant) => fast(instant) !== reference(instant));
      expect(
        wrong.map((instant) => ({ instant, fast: fast(instant), reference: reference(instant) })),
      ).toEqual([]);
      expect(fast(1_700_000_000_000)).not.toContain(".");
      // Cut, not rounded: .999 stays in its second (and so the last instant of a day in its day).
      expect(fast(1_700_000_000_999)).toBe(fast(1_700_000_000_000));
      expect(fast(1_699_999_999_999)).toMatch(/:19[+-]\d\d:\d\d$/);
    },
  );

  it.each([
    ["Europe/Berlin", 2024],
    // Half-hour DST (Lord Howe), a skipped calendar day (Samoa, 2011-12-30), DST suspended for Ramadan
    // (Casablanca: two transitions a month apart), a two-hour DST step (Troll).
    ["Australia/Lord_Howe", 2024],
    ["Pacific/Apia", 2011],
    ["Africa/Casablanca", 2024],
    ["Antarctica/Troll", 2024],
  ])("%s %i: every 15-minute bucket of the year has the offset looked up for its own start", (zone, year) => {
    const fast = isoFormatter(zone);
    const reference = plain(zone);
    // Each instant starts a bucket the formatter has not seen: its offset comes from the spans. One
    // expect over all 35,000 (each its own expect took most of the test's time): the instants that differ.
    const wrong: { instant: number; fast: string; reference: string }[] = [];
    for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += 900_000) {
      const [got, want] = [fast(t + 1), reference(t + 1)];
      if (got !== want) wrong.push({ instant: t + 1, fast: got, reference: want });
    }
    expect(wrong).toEqual([]);
  });
});
