import { describe, expect, it } from "vitest";
import { addDays, daysBetween, eachDay, isDay } from "../../src/sync/days.ts";
import { filterKeyFor, planWindows } from "../../src/sync/plan.ts";

describe("planWindows", () => {
  it("covers the range newest first with windows that overlap by one day", () => {
    const windows = planWindows("2024-01-01", "2024-03-31", 30);
    expect(windows).toEqual([
      { startDate: "2024-03-02", endDate: "2024-03-31" },
      { startDate: "2024-02-01", endDate: "2024-03-02" },
      { startDate: "2024-01-02", endDate: "2024-02-01" },
      { startDate: "2024-01-01", endDate: "2024-01-02" },
    ]);
    // Every day of the range is inside some window.
    for (const day of eachDay("2024-01-01", "2024-03-31")) {
      expect(windows.some((w) => w.startDate <= day && day <= w.endDate)).toBe(true);
    }
    expect(windows.every((w) => w.endDate <= "2024-03-31" && w.startDate >= "2024-01-01")).toBe(true);
  });

  it("plans a single window for a short range and none for an empty one", () => {
    expect(planWindows("2024-05-01", "2024-05-01", 30)).toEqual([
      { startDate: "2024-05-01", endDate: "2024-05-01" },
    ]);
    expect(planWindows("2024-05-02", "2024-05-01", 30)).toEqual([]);
  });
});

describe("days and filter keys", () => {
  it("validates and moves calendar days without a time zone", () => {
    expect(isDay("2024-02-29")).toBe(true);
    expect(isDay("2023-02-29")).toBe(false);
    expect(isDay("2024-1-01")).toBe(false);
    expect(addDays("2024-03-01", -1)).toBe("2024-02-29");
    expect(daysBetween("2024-01-01", "2024-12-31")).toBe(365);
  });

  it("keys filter sets by their sorted, unique action types", () => {
    expect(filterKeyFor([])).toBe("all");
    expect(filterKeyFor(["gate_update", "config_update", "gate_update"])).toBe(
      "types:config_update,gate_update",
    );
  });
});
