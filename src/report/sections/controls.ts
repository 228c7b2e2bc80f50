// The Controls section the compliance report opens with (when the config lists controls), and the
// findings CSV: the config's controls judged over the report's period by the very code `flagtrail
// check` runs (src/controls/), each finding with the waiver in force when the report was generated.
// The ticket keys the ticket-reference controls find become a column of the change CSVs.
import { evaluateControls } from "../../controls/check.ts";
import type { Control } from "../../controls/config.ts";
import type { WaiverView } from "../../controls/finding.ts";
import { readSnapshotInputs } from "../../controls/inputs.ts";
import { waiversInForce } from "../../controls/waivers.ts";
import type { NewFinding } from "../../store/controls/findings.ts";
import type { CoverageRow, ReportSnapshot } from "../../store/reportQueries.ts";
import type { CsvColumn } from "../csv.ts";
import { mdTable, mdText } from "../escape.ts";
import type { Period } from "../period.ts";
import { reportParamsFor, type ServerDays } from "../serverDays.ts";
import { type ComplianceContext, heading, type MarkdownOut, querySection } from "./markdown.ts";

export const FINDINGS_CSV = "findings";
/** Per control, the findings listed in the document; every one is a row of the findings CSV. */
const LISTED_PER_CONTROL = 100;

export type ReportFinding = NewFinding & { waiver: WaiverView | null };

export interface ControlsRead {
  controls: readonly Control[];
  findings: ReportFinding[];
  /** The ticket key of each change, by record id: the first ticket-reference control's that found one. */
  tickets: Map<string, string>;
}

/** The controls' findings over the report's period, from its snapshot, as of `generatedAt`. */
export async function readControls(
  snapshot: ReportSnapshot,
  at: {
    period: Period;
    serverDays: ServerDays | null;
    coverage: readonly CoverageRow[] | null;
    generatedAt: string;
  },
  controls: readonly Control[],
): Promise<ControlsRead> {
  const params = reportParamsFor(at.period, null, at.serverDays);
  const now = Date.parse(at.generatedAt);
  // No syncRunningSince (check's live lease): a report judges its snapshot, which a sync still running has
  // not brought up to date; a holder's liveness is not in the store the manifest describes (docs/controls.md).
  const inputs = await readSnapshotInputs(snapshot, controls, {
    params,
    serverDays: at.serverDays,
    coverage: at.coverage,
    now,
  });
  // verify walks the whole store: its judgment is `flagtrail verify`'s and check's, not the report's.
  const { rows, tickets } = evaluateControls(
    controls.filter((c) => c.kind !== "integrity"),
    { ...inputs, integrityFailure: null },
  );
  const waivers = waiversInForce(await snapshot.rows("controlWaivers", params), at.generatedAt.slice(0, 10));
  const byRecord = new Map<string, string>();
  for (const t of tickets) if (!byRecord.has(t.recordId)) byRecord.set(t.recordId, t.ticket);
  return {
    controls,
    findings: rows.map((row) => ({ ...row, waiver: waivers.get(row.id) ?? null })),
    tickets: byRecord,
  };
}

/** A control's parameters as `name: value` pairs (its id, kind and severity have their own columns). */
function parameters(control: Control): string {
  const { id: _id, kind: _kind, severity: _severity, ...rest } = control;
  const pairs = Object.entries(rest).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(", ") : String(v)}`);
  return pairs.length === 0 ? "—" : mdText(pairs.join("; "));
}

function waiverText(w: WaiverView | null, formatTime: (ms: number) => string): string {
  if (w === null) return "";
  const at = formatTime(Date.parse(w.at));
  return mdText(`${w.by}: ${w.reason} (${at}${w.expires ? `, expires ${w.expires}` : ""})`);
}

function writeControlFindings(
  out: MarkdownOut,
  ctx: ComplianceContext,
  control: Control,
  mine: ReportFinding[],
) {
  heading(out, ctx, 3, `${mdText(control.id)}: ${mine.length} ${mine.length === 1 ? "finding" : "findings"}`);
  out.line();
  const listed = mine.slice(0, LISTED_PER_CONTROL);
  out.line(
    mdTable(
      [
        "Finding",
        "Time",
        "Entity",
        "Action type",
        "Actor",
        "Finding says",
        "Waiver (by: why, when, expires)",
      ],
      listed.map((f) => [
        mdText(f.id),
        f.occurred_at === null ? "" : ctx.formatTime(f.occurred_at),
        mdText(f.entity),
        mdText(f.action_type),
        mdText(f.actor),
        mdText(f.message),
        waiverText(f.waiver, ctx.formatTime),
      ]),
    ),
  );
  out.line();
  if (mine.length > listed.length) {
    out.line(`The first ${listed.length} are listed; every one is a row of the ${FINDINGS_CSV} CSV.`);
    out.line();
  }
}

export function writeControls(out: MarkdownOut, ctx: ComplianceContext, read: ControlsRead): void {
  heading(out, ctx, 2, "Controls");
  out.line();
  out.line(
    "The config's controls, judged over this period as `flagtrail check` judges them; a waiver is shown " +
      `as in force when the report was generated. Every finding is a row of the ${FINDINGS_CSV} CSV, and ` +
      "each control's are listed under Control findings, at the end.",
  );
  out.line();
  const rows = read.controls.map((control) => {
    const mine = read.findings.filter((f) => f.control_id === control.id);
    const waived = mine.filter((f) => f.waiver !== null).length;
    const counts =
      control.kind === "integrity"
        ? ["not judged here: `flagtrail verify`", "", ""]
        : [String(mine.length), String(waived), String(mine.length - waived)];
    return [mdText(control.id), control.kind, control.severity, parameters(control), ...counts];
  });
  out.line(mdTable(["Control", "Kind", "Severity", "Parameters", "Findings", "Waived", "Open"], rows));
  out.line();
  querySection(out, ctx, "controlChanges");
}

/** Each control's findings, after the report's own sections: the summary comes first for a reader. */
export function writeControlFindingLists(out: MarkdownOut, ctx: ComplianceContext, read: ControlsRead): void {
  if (read.findings.length === 0) return;
  heading(out, ctx, 2, "Control findings");
  out.line();
  for (const control of read.controls) {
    const mine = read.findings.filter((f) => f.control_id === control.id);
    if (mine.length > 0) writeControlFindings(out, ctx, control, mine);
  }
}

/** The findings CSV's columns. */
export function findingColumns(formatTime: (ms: number) => string): CsvColumn<ReportFinding>[] {
  return [
    { header: "finding_id", value: (f) => f.id },
    { header: "control", value: (f) => f.control_id },
    { header: "kind", value: (f) => f.kind },
    { header: "severity", value: (f) => f.severity },
    { header: "time", value: (f) => (f.occurred_at === null ? null : formatTime(f.occurred_at)) },
    { header: "epoch_ms", value: (f) => f.occurred_at },
    { header: "record_id", value: (f) => f.record_id },
    { header: "entity_name", value: (f) => f.entity },
    { header: "action_type", value: (f) => f.action_type },
    { header: "actor", value: (f) => f.actor },
    { header: "message", value: (f) => f.message },
    { header: "waived_by", value: (f) => f.waiver?.by ?? null },
    { header: "waiver_reason", value: (f) => f.waiver?.reason ?? null },
    { header: "waived_at", value: (f) => (f.waiver ? formatTime(Date.parse(f.waiver.at)) : null) },
    { header: "waiver_expires", value: (f) => f.waiver?.expires ?? null },
  ];
}
