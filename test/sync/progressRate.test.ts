// The terminal progress bar's rate and time left (issue 26).
import { describe, expect, it } from "vitest";
import { rateAndEta } from "../../src/commands/syncProgress.ts";

const step = (done: number, total: number, fetched: number) =>
  ({ type: "progress", phase: "windows", done, total, fetched, inserted: fetched }) as const;

describe("rateAndEta", () => {
  it("gives records per second and the phase's time left at its pace so far", () => {
    expect(rateAndEta(step(2, 8, 5000), 0, 10_000)).toEqual({ rate: 500, eta: 30 });
  });
  it("has no time left before the first step and after the last", () => {
    expect(rateAndEta(step(0, 8, 100), 0, 1_000).eta).toBeUndefined();
    expect(rateAndEta(step(8, 8, 100), 0, 1_000).eta).toBeUndefined();
  });
  it("measures the time left from the phase's own start", () => {
    expect(rateAndEta(step(1, 3, 0), 0, 20_000, 10_000)).toEqual({ rate: 0, eta: 20 });
  });
});
