// The demo's numbers do not depend on the time of day it first runs: its simulated history ends at the
// start of that UTC day, not at the instant of the run, so two first runs on one day report the same
// month from the same records. (Before, the history ended at the run's instant: the month's window cut
// the seeded history at another place every hour: this test saw 43, then 36 experiment state changes.)
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runDemo } from "../../src/demo/runDemo.ts";

const DAY_MS = 86_400_000;

async function demoAt(now: number) {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-demo-time-of-day-"));
  const result = await runDemo({
    dbPath: join(dir, "demo.db"),
    outDir: join(dir, "reports"),
    seed: 2026,
    records: 1500,
    days: 120,
    now,
  });
  const csvs = Object.fromEntries(
    result.report.files
      .filter((f) => f.name.endsWith(".csv"))
      .map((f) => [f.name, readFileSync(f.path).toString("utf8")]),
  );
  return { result, csvs };
}

describe("the demo at two times of one day", () => {
  it("reports the same month with the same numbers and the same CSV bytes", async () => {
    // Yesterday (UTC): both clocks are in the past whenever the test runs.
    const day = Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS;
    const early = await demoAt(day + 1 * 3_600_000 + 17_000);
    const late = await demoAt(day + 22 * 3_600_000 + 43 * 60_000);
    expect(late.result.anchor).toBe(early.result.anchor);
    expect(late.result.report.period).toEqual(early.result.report.period);
    expect(late.result.report.counts).toEqual(early.result.report.counts);
    expect(late.result.controls.controls).toEqual(early.result.controls.controls);
    // The three data CSVs and the findings CSV of the demo's controls.
    expect(Object.keys(late.csvs).length).toBe(4);
    expect(late.csvs).toEqual(early.csvs);
    // Later in the day, more of the demo's live activity after the anchor: none of it in the month.
    expect(late.result.liveRecords).toBeGreaterThan(early.result.liveRecords);
  });
});
