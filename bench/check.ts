// `flagtrail check` over the report bench's month (issue 23: goal ≤ 3 s on a 1M-record store), timed
// in-process on the store bench/report.ts built, beside that run's bare SELECT of the month.
import { checkProject } from "../src/controls/check.ts";
import { parseControlsConfig } from "../src/controls/config.ts";
import { closeProjectStores, openStoreProjects } from "../src/store/projectStores.ts";

/**
 * The record controls and completeness over the month (integrity is left out: the bench's hashes make
 * no valid chain, and verify is its own figure). No change log cites a ticket and no change is
 * reviewed, so nearly every change is a finding of several controls: check's worst case.
 */
const BENCH_CONTROLS = parseControlsConfig(
  JSON.stringify({
    controls: [
      { id: "rr", kind: "review-required", severity: "high" },
      { id: "sa", kind: "no-self-approval", severity: "high" },
      {
        id: "cw",
        kind: "change-window",
        severity: "medium",
        days: ["mon", "tue", "wed", "thu", "fri"],
        hours: "08:00-18:00",
        zone: "Europe/Berlin",
        emergencyPattern: "EMERGENCY",
      },
      { id: "tk", kind: "ticket-reference", severity: "low", pattern: "[A-Z][A-Z0-9]+-\\d+" },
      { id: "ra", kind: "restricted-actor", severity: "high", actors: ["User 7"] },
      { id: "complete", kind: "completeness", severity: "high" },
    ],
  }),
  "bench",
);

/** One check of June 2023 on the store: its wall time and the findings it reported. */
export async function timeCheck(dbPath: string): Promise<{ ms: number; findings: number }> {
  const parts = await openStoreProjects(dbPath);
  try {
    const started = performance.now();
    const period = { start: Date.UTC(2023, 5, 1), end: Date.UTC(2023, 6, 1) };
    const checked = await checkProject(parts[0]!, { ...BENCH_CONTROLS }, period, Date.UTC(2023, 6, 5));
    return { ms: performance.now() - started, findings: checked.findings.length };
  } finally {
    await closeProjectStores(parts);
  }
}
