import { describe, expect, it } from "vitest";
import { previousPeriod, todayIn } from "../../src/daemon/periods.ts";

describe("report periods", () => {
  it.each([
    ["daily", "2026-03-01", "2026-02-28", "2026-02-28"],
    ["daily", "2024-03-01", "2024-02-29", "2024-02-29"],
    ["weekly", "2026-11-22", "2026-11-09", "2026-11-15"], // a Sunday: the week before the current one
    ["weekly", "2026-11-23", "2026-11-16", "2026-11-22"], // a Monday
    ["monthly", "2026-01-15", "2025-12-01", "2025-12-31"],
    ["monthly", "2026-03-01", "2026-02-01", "2026-02-28"],
  ] as const)("%s before %s is %s .. %s", (cadence, today, from, to) => {
    expect(previousPeriod(cadence, today)).toEqual({ from, to });
  });

  it("reads today in the report's zone, not UTC", () => {
    const instant = Date.UTC(2026, 10, 22, 23, 30); // 23:30 UTC
    expect(todayIn("UTC", instant)).toBe("2026-11-22");
    expect(todayIn("Asia/Tokyo", instant)).toBe("2026-11-23");
    expect(todayIn("America/Los_Angeles", instant)).toBe("2026-11-22");
  });
});
