// One project's part of a report set: what is read from its snapshot before any file is written
// (parameters, coverage, chain head, controls), and the names of the set's files.
import type { Control } from "../controls/config.ts";
import type { CoverageRow, ReportParams } from "../store/reportQueries.ts";
import { SLOW_READS } from "./compliance.ts";
import type { ReportFormat } from "./formats.ts";
import type { ManifestStoreState } from "./manifest.ts";
import type { Period } from "./period.ts";
import type { ProjectSnapshot } from "./projects.ts";
import { type ControlsRead, FINDINGS_CSV, readControls } from "./sections/controls.ts";
import { EntityFold } from "./sections/entities.ts";
import { UNREVIEWED_CSV } from "./sections/reviews.ts";
import { reportParamsFor, type ServerDays, serverDaysOf } from "./serverDays.ts";

export interface ReportArgs {
  period: Period;
  formats: Set<ReportFormat>;
  actionTypes: string[] | null;
  generatedAt: string;
  bom: boolean;
  /** The config's controls: the report then opens with them and writes the findings CSV. */
  controls: readonly Control[] | null;
}

export type ReportCounts = {
  experimentStateChanges: number;
  configEdits: number;
  unreviewedChanges: number;
  records: number;
};

/** One project's part of the report: its snapshot, what is read from it first, and its counts. */
/** A per-entity table for each CSV, folded from its rows. */
interface CsvFolds {
  experimentSummary: EntityFold;
  configSummary: EntityFold;
  unreviewed: EntityFold;
}

export interface ReportPart extends ProjectSnapshot {
  params: ReportParams;
  serverDays: ServerDays | null;
  /** The coverage rows of the period's server days (null: no dated records), read once for every use. */
  coverage: CoverageRow[] | null;
  notice: string | null;
  store: ManifestStoreState;
  counts: ReportCounts;
  /** The per-entity tables folded from the CSVs' rows as they are written (see ComplianceContext). */
  folds: CsvFolds | null;
  controls: ControlsRead | null;
}

export type WrittenFile = { name: string; rows: number; columns?: string[] };

/**
 * `<kind>_<from>_<to>[_<zone>].<ext>`: the same days read in another zone are another period, so a
 * zone other than UTC is part of the name (its slashes as dashes: Europe-Berlin).
 */
export function reportFileNames(period: Period) {
  const zone = period.timeZone === "UTC" ? "" : `_${period.timeZone.replaceAll("/", "-")}`;
  const stem = `${period.from}_${period.to}${zone}`;
  return {
    experimentStateChanges: `experiment-state-changes_${stem}.csv`,
    configEdits: `config-edits_${stem}.csv`,
    unreviewedChanges: `${UNREVIEWED_CSV}_${stem}.csv`,
    findings: `${FINDINGS_CSV}_${stem}.csv`,
    compliance: `compliance_${stem}.md`,
    complianceHtml: `compliance_${stem}.html`,
    manifest: `manifest_${stem}.json`,
  };
}

/** What a part's report reads before writing anything: its parameters, coverage and chain head. */
export async function readPart(taken: ProjectSnapshot, args: ReportArgs): Promise<ReportPart> {
  const { snapshot } = taken;
  const { period } = args;
  const serverDays = await serverDaysOf(snapshot, period);
  const params = reportParamsFor(period, args.actionTypes, serverDays);
  // Named now, so that PostgreSQL's second session connects while the reads below run, not while the
  // change CSVs' read waits for it (their reads wait behind it for that read's first rows, as before).
  const compliance = args.formats.has("md") || args.formats.has("html");
  await snapshot.ahead?.(compliance ? SLOW_READS : [], params);
  const chainHead = await snapshot.chainHead();
  const coverage = params.serverFromDay === null ? null : await snapshot.rows("coverage", params);
  return {
    ...taken,
    params,
    serverDays,
    coverage,
    notice: coverageNotice(period, coverage),
    store: { records: await snapshot.storedRecords(), chainHead },
    counts: { experimentStateChanges: 0, configEdits: 0, unreviewedChanges: 0, records: 0 },
    folds: args.formats.has("csv")
      ? { experimentSummary: new EntityFold(), configSummary: new EntityFold(), unreviewed: new EntityFold() }
      : null,
    controls:
      args.controls && args.controls.length > 0
        ? await readControls(
            snapshot,
            { period, serverDays, coverage, generatedAt: args.generatedAt },
            args.controls,
          )
        : null,
  };
}

/**
 * A period no sync ever covered (no server-day counts stored for any of its days) yields a report as
 * empty as a quiet period's: say which it is, first.
 */
function coverageNotice(period: Period, coverage: readonly CoverageRow[] | null): string | null {
  if (coverage !== null && coverage.length > 0) return null;
  return (
    `No synced coverage: no day of ${period.from} to ${period.to} was ever checked by a sync, ` +
    "so an empty section here does not mean that nothing happened; sync these days first."
  );
}
