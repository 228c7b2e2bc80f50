// What `flagtrail check` prints: a table for people, JSON for scripts, JUnit XML for CI (one test case
// per control and project, one <failure> listing its unwaived findings at or above the failing severity;
// those below it and the waived ones in its system-out).

import type { CheckedProject } from "./check.ts";
import type { Control, Severity } from "./config.ts";
import { SEVERITY_RANK } from "./evaluate.ts";
import type { Finding } from "./finding.ts";
import { isoWithOffset } from "./isoTime.ts";

export const CHECK_FORMATS = ["table", "json", "junit"] as const;

export function jsonOutput(projects: readonly CheckedProject[]): string {
  return `${JSON.stringify(
    projects.flatMap((p) => p.findings),
    null,
    2,
  )}\n`;
}

/** One control character or newline would break a table row: shown as a space. */
function cell(text: string | null): string {
  return (text ?? "").replace(/[\u0000-\u001f\u007f]/g, " ");
}

export function tableOutput(projects: readonly CheckedProject[], controls: readonly Control[]): string {
  const lines: string[] = [];
  for (const p of projects) {
    // In the findings' format (not Z beside +00:00).
    const period = `${isoWithOffset(p.start)} to ${isoWithOffset(p.end)}`;
    lines.push(`Project ${p.project}, ${period}:`);
    for (const control of controls) {
      const mine = p.findings.filter((f) => f.control === control.id);
      const waived = mine.filter((f) => f.waiver !== null).length;
      lines.push(
        `  ${control.id} (${control.kind}, ${control.severity}): ${mine.length === 0 ? "pass" : `${mine.length - waived} open, ${waived} waived`}`,
      );
      for (const f of mine) {
        const what = [f.occurredAt, f.entity, f.actionType, f.actor].filter((x) => x !== null).map(cell);
        const waiver = f.waiver ? ` [waived by ${cell(f.waiver.by)}: ${cell(f.waiver.reason)}]` : "";
        lines.push(`    ${f.id}  ${what.join("  ")}  ${cell(f.message)}${waiver}`);
      }
    }
  }
  return `${lines.join("\n")}\n`;
}

function xml(text: string): string {
  return (
    text
      .replaceAll("&", "&amp;")
      .replaceAll("<", "&lt;")
      .replaceAll(">", "&gt;")
      .replaceAll('"', "&quot;")
      // XML 1.0 cannot carry these at all, not even escaped.
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd")
  );
}

function findingLine(f: Finding): string {
  return [f.occurredAt, f.entity, f.actionType, f.actor, f.message].filter((x) => x !== null).join(" | ");
}

/** The system-out of a test case: open findings below the failing severity, then the waived ones. */
function passedLines(below: readonly Finding[], waived: readonly Finding[], failOn: Severity): string[] {
  return [
    ...below.map((f) => `open ${f.id} (${f.severity}, below ${failOn}): ${findingLine(f)}`),
    ...waived.map((f) => `waived ${f.id} by ${f.waiver!.by}: ${f.waiver!.reason}`),
  ];
}

/**
 * One test case per control and project, with at most one <failure>: JUnit readers (GitLab, Jenkins)
 * expect one per case and failures <= tests. Its message counts the unwaived findings at or above
 * `failOn`; its text lists them, a line each. Those below `failOn` do not fail the run, so they do not
 * fail a test case either: CI would show failed tests on a passing job.
 */
export function junitOutput(
  projects: readonly CheckedProject[],
  controls: readonly Control[],
  failOn: Severity,
): string {
  const cases: string[] = [];
  let failures = 0;
  for (const p of projects) {
    for (const control of controls) {
      const mine = p.findings.filter((f) => f.control === control.id);
      const unwaived = mine.filter((f) => f.waiver === null);
      const open = unwaived.filter((f) => SEVERITY_RANK[f.severity] >= SEVERITY_RANK[failOn]);
      const passed = passedLines(
        unwaived.filter((f) => !open.includes(f)),
        mine.filter((f) => f.waiver !== null),
        failOn,
      );
      if (open.length > 0) failures += 1;
      const count = `${open.length} unwaived ${open.length === 1 ? "finding" : "findings"}`;
      const body = [
        ...(open.length > 0
          ? [
              `      <failure message="${xml(count)}" type="${xml(control.severity)}">${xml(open.map((f) => `${f.id}: ${findingLine(f)}`).join("\n"))}</failure>`,
            ]
          : []),
        ...(passed.length > 0 ? [`      <system-out>${xml(passed.join("\n"))}</system-out>`] : []),
      ];
      const name = `${xml(control.id)}`;
      const head = `    <testcase classname="flagtrail.${xml(p.project)}" name="${name}" time="0"`;
      cases.push(body.length === 0 ? `${head}/>` : `${head}>\n${body.join("\n")}\n    </testcase>`);
    }
  }
  const tests = projects.length * controls.length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="flagtrail check" tests="${tests}" failures="${failures}">`,
    `  <testsuite name="controls" tests="${tests}" failures="${failures}" errors="0" skipped="0">`,
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
