// Day boundaries of a report period, including zones whose DST starts at local midnight.
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

  it("keeps ordinary midnights and the Berlin 23-hour day", () => {
    expect(days("2024-03-30", "2024-04-01", "Europe/Berlin")).toEqual([
      { day: "2024-03-30", start: "2024-03-30T00:00:00+01:00", hours: 24 },
      { day: "2024-03-31", start: "2024-03-31T00:00:00+01:00", hours: 23 },
      { day: "2024-04-01", start: "2024-04-01T00:00:00+02:00", hours: 24 },
    ]);
  });
});
