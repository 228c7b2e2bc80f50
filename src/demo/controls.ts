// The demo's last step: the report becomes a control. An example config file of controls is written
// beside the reports (once: a user's edits to it survive later runs), the report is written with it (its
// Controls section), and `flagtrail check` is run over the report's month, so a newcomer sees findings,
// the exit code a CI job fails on, and how a waiver works.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkStore } from "../controls/check.ts";
import { type ControlsConfig, parseControlsConfig } from "../controls/config.ts";
import { readConfigText } from "../projects.ts";
import type { Period } from "../report/period.ts";
import { REVIEW_FLOWS } from "../report/reviews.ts";

export const DEMO_CONFIG_FILE = "flagtrail-demo.config.json";

// One control of each kind a month of the simulated history can show, plus the evidence ones. The
// integrity control is left out: it is `flagtrail verify`, which the demo already suggests.
const DEMO_CONFIG = {
  controls: [
    { id: "review", kind: "review-required", severity: "high" },
    { id: "self-approval", kind: "no-self-approval", severity: "high" },
    { id: "api-changes", kind: "restricted-actor", severity: "medium", actors: ["CONSOLE API"] },
    {
      id: "office-hours",
      kind: "change-window",
      severity: "low",
      days: ["mon", "tue", "wed", "thu", "fri"],
      hours: "08:00-18:00",
      zone: "America/Los_Angeles",
      emergencyPattern: "[Hh]otfix|[Ii]ncident",
    },
    { id: "fresh-sync", kind: "sync-freshness", severity: "high", maxAgeHours: 26 },
    { id: "complete", kind: "completeness", severity: "high" },
  ],
};

/** The demo's config file of controls, read (the report and the check both use it). */
export interface DemoConfig {
  configPath: string;
  /** False when the file was already there (kept as the user may have edited it). */
  written: boolean;
  config: ControlsConfig;
}

export interface DemoControls {
  /** The config file the check read. */
  configPath: string;
  /** False when the file was already there (kept as the user may have edited it). */
  written: boolean;
  /**
   * Each control of the file, in its order, with its open (unwaived) and waived findings. `approvals`:
   * a no-self-approval control's open findings that are approvals (the report's self-approvals); the
   * rest are changes made by the person who approved their review.
   */
  controls: {
    id: string;
    kind: string;
    severity: string;
    open: number;
    waived: number;
    approvals?: number;
  }[];
  /** An open finding's id, for the waiver hint. */
  exampleFinding: string | undefined;
}

/** Writes the example config beside the reports when it is missing, and reads it. */
export function demoControlsConfig(outDir: string): DemoConfig {
  const configPath = join(outDir, DEMO_CONFIG_FILE);
  const written = !existsSync(configPath);
  if (written) {
    mkdirSync(outDir, { recursive: true });
    writeFileSync(configPath, `${JSON.stringify(DEMO_CONFIG, null, 2)}\n`);
  }
  return { configPath, written, config: parseControlsConfig(readConfigText(configPath), configPath) };
}

const APPROVALS = new Set<string>(REVIEW_FLOWS.map((flow) => flow.accept));

export async function checkDemoControls(
  dbPath: string,
  demo: DemoConfig,
  period: Period,
  now: number,
): Promise<DemoControls> {
  const { config } = demo;
  const checked = await checkStore(dbPath, config, period, now);
  const findings = checked.flatMap((project) => project.findings);
  return {
    configPath: demo.configPath,
    written: demo.written,
    controls: config.controls.map((control) => {
      const own = findings.filter((f) => f.control === control.id);
      const open = own.filter((f) => f.waiver === null);
      return {
        id: control.id,
        kind: control.kind,
        severity: control.severity,
        open: open.length,
        waived: own.length - open.length,
        ...(control.kind === "no-self-approval"
          ? { approvals: open.filter((f) => f.actionType !== null && APPROVALS.has(f.actionType)).length }
          : {}),
      };
    }),
    exampleFinding: findings.find((f) => f.waiver === null && f.recordId !== null)?.id,
  };
}
