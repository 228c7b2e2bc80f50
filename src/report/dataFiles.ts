// The data files of a report set (CSVs, compliance Markdown, its HTML), written into the staging
// directory from the projects' snapshots: one project's as ever, several projects' combined into the
// same files (src/report/projects.ts).
import { join } from "node:path";
import type { Control } from "../controls/config.ts";
import type { CsvRow, EntitySummaryRow, ReportParams, ReportSnapshot } from "../store/reportQueries.ts";
import { VERSION } from "../version.ts";
import { type ComplianceContext, writeComplianceMarkdown } from "./compliance.ts";
import { type CsvColumn, writeCsv } from "./csv.ts";
import type { ReportFormat } from "./formats.ts";
import { writeComplianceHtml } from "./html.ts";
import type { ManifestStoreState } from "./manifest.ts";
import { isoFormatter, type Period } from "./period.ts";
import { type ProjectSnapshot, projectBatches, projectColumns, writeProjectsCompliance } from "./projects.ts";
import {
  type ControlsRead,
  FINDINGS_CSV,
  findingColumns,
  type ReportFinding,
  readControls,
} from "./sections/controls.ts";
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
interface ReportPart extends ProjectSnapshot {
  params: ReportParams;
  serverDays: ServerDays | null;
  notice: string | null;
  store: ManifestStoreState;
  counts: ReportCounts;
  /** The per-entity tables folded from the CSVs' rows as they are written (see ComplianceContext). */
  folds: CsvFolds | null;
  controls: ControlsRead | null;
}

/** A per-entity table for each CSV, folded from its rows. */
interface CsvFolds {
  experimentSummary: EntityFold;
  configSummary: EntityFold;
  unreviewed: EntityFold;
}

type WrittenFile = { name: string; rows: number; columns?: string[] };

export interface Written {
  parts: ReportPart[];
  files: WrittenFile[];
  /** Over every project. */
  counts: ReportCounts;
}

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

/** `tickets`: the ticket key per record id, a last column when a ticket-reference control is configured. */
function csvColumns(
  formatTime: (ms: number) => string,
  tickets: ReadonlyMap<string, string> | null,
): CsvColumn<CsvRow>[] {
  const columns: CsvColumn<CsvRow>[] = [
    { header: "time", value: (r) => formatTime(r.occurred_at) },
    { header: "epoch_ms", value: (r) => r.occurred_at },
    { header: "record_id", value: (r) => r.id },
    { header: "updated_by", value: (r) => r.updated_by },
    { header: "updated_by_user_id", value: (r) => r.updated_by_user_id },
    { header: "updated_by_email", value: (r) => r.modifier_email },
    { header: "entity_name", value: (r) => r.name },
    { header: "action_type", value: (r) => r.action_type },
    { header: "change_log", value: (r) => r.change_log },
    { header: "rule_diff_summary", value: (r) => r.rule_diff_summary },
  ];
  if (tickets) columns.push({ header: "ticket", value: (r) => tickets.get(r.id) ?? null });
  return columns;
}

/** What a part's report reads before writing anything: its parameters, coverage and chain head. */
async function readPart(taken: ProjectSnapshot, args: ReportArgs): Promise<ReportPart> {
  const { snapshot } = taken;
  const { period } = args;
  const serverDays = await serverDaysOf(snapshot, period);
  const params = reportParamsFor(period, args.actionTypes, serverDays);
  const chainHead = await snapshot.chainHead();
  return {
    ...taken,
    params,
    serverDays,
    notice: await coverageNotice(snapshot, period, params),
    store: { records: await snapshot.storedRecords(), chainHead },
    counts: { experimentStateChanges: 0, configEdits: 0, unreviewedChanges: 0, records: 0 },
    folds: args.formats.has("csv")
      ? { experimentSummary: new EntityFold(), configSummary: new EntityFold(), unreviewed: new EntityFold() }
      : null,
    controls:
      args.controls && args.controls.length > 0
        ? await readControls(snapshot, { period, serverDays, generatedAt: args.generatedAt }, args.controls)
        : null,
  };
}

/** Every data file of the set, into `staging`, each project's part from its own snapshot. */
export async function writeFiles(
  snapshots: readonly ProjectSnapshot[],
  staging: string,
  args: ReportArgs,
): Promise<Written> {
  const parts: ReportPart[] = [];
  for (const taken of snapshots) parts.push(await readPart(taken, args));
  const files: WrittenFile[] = [];
  if (args.formats.has("csv")) files.push(...(await writeCsvs(parts, staging, args)));
  if (args.formats.has("csv") && parts.some((p) => p.controls))
    files.push(await writeFindingsCsv(parts, staging, args));
  if (args.formats.has("md") || args.formats.has("html"))
    files.push(...(await writeCompliance(parts, staging, args)));
  else {
    for (const part of parts)
      part.counts.records = (await part.snapshot.rows("recordCount", part.params))[0]?.records ?? 0;
  }
  return { parts, files, counts: sumCounts(parts) };
}

function sumCounts(parts: readonly ReportPart[]): ReportCounts {
  const sum: ReportCounts = { experimentStateChanges: 0, configEdits: 0, unreviewedChanges: 0, records: 0 };
  for (const { counts } of parts)
    for (const key of Object.keys(sum) as (keyof ReportCounts)[]) sum[key] += counts[key];
  return sum;
}

/** The three CSVs; with several projects, each has a first column `project` and every project's rows in turn. */
async function writeCsvs(
  parts: readonly ReportPart[],
  staging: string,
  args: ReportArgs,
): Promise<WrittenFile[]> {
  const files: WrittenFile[] = [];
  const names = reportFileNames(args.period);
  const columns = csvColumns(isoFormatter(args.period.timeZone), ticketsOf(parts, args));
  for (const [key, query, fold] of [
    ["experimentStateChanges", "experimentStateChangesCsv", "experimentSummary"],
    ["configEdits", "configEditsCsv", "configSummary"],
    ["unreviewedChanges", "unreviewedCsv", "unreviewed"],
  ] as const) {
    const onRow = (part: ReportPart, row: CsvRow) => {
      part.counts[key] += 1;
      part.folds?.[fold].add(summaryEntry(row));
    };
    const path = join(staging, names[key]);
    const options = { bom: args.bom };
    let headers: string[];
    if (parts.length === 1) {
      const part = parts[0]!;
      const rows = part.snapshot.batches(query, part.params);
      await writeCsv(path, columns, rows, { ...options, onRow: (row) => onRow(part, row) });
      headers = columns.map((c) => c.header);
    } else {
      const combined = projectColumns(columns);
      const rows = projectBatches(parts, (part) => part.snapshot.batches(query, part.params));
      await writeCsv(path, combined, rows, { ...options, onRow: (r) => onRow(r.part, r.row) });
      headers = combined.map((c) => c.header);
    }
    const count = parts.reduce((sum, part) => sum + part.counts[key], 0);
    files.push({ name: names[key], rows: count, columns: headers });
  }
  return files;
}

/** Every project's ticket keys, when a ticket-reference control is configured (record ids are unique). */
function ticketsOf(parts: readonly ReportPart[], args: ReportArgs): Map<string, string> | null {
  if (!args.controls?.some((c) => c.kind === "ticket-reference")) return null;
  const all = new Map<string, string>();
  for (const part of parts) for (const [id, ticket] of part.controls?.tickets ?? []) all.set(id, ticket);
  return all;
}

/** findings_<period>.csv: every finding of the controls over the period, with its waiver. */
async function writeFindingsCsv(
  parts: readonly ReportPart[],
  staging: string,
  args: ReportArgs,
): Promise<WrittenFile> {
  const name = reportFileNames(args.period).findings;
  const columns = findingColumns(isoFormatter(args.period.timeZone));
  const options = { bom: args.bom };
  async function* one(rows: ReportFinding[]) {
    if (rows.length > 0) yield rows;
  }
  let headers: string[];
  if (parts.length === 1) {
    await writeCsv(join(staging, name), columns, one(parts[0]!.controls?.findings ?? []), options);
    headers = columns.map((c) => c.header);
  } else {
    const combined = projectColumns(columns);
    const rows = projectBatches(parts, (part) => one(part.controls?.findings ?? []));
    await writeCsv(join(staging, name), combined, rows, options);
    headers = combined.map((c) => c.header);
  }
  const rows = parts.reduce((sum, part) => sum + (part.controls?.findings.length ?? 0), 0);
  return { name, rows, columns: headers };
}

function complianceContext(part: ReportPart, args: ReportArgs): ComplianceContext {
  return {
    snapshot: part.snapshot,
    period: args.period,
    serverDays: part.serverDays,
    actionTypes: args.actionTypes,
    params: part.params,
    formatTime: isoFormatter(args.period.timeZone),
    generatedAt: args.generatedAt,
    version: VERSION,
    notice: part.notice,
    controls: part.controls,
    unreviewedFromCsv: part.folds
      ? { count: part.counts.unreviewedChanges, entities: part.folds.unreviewed }
      : null,
    summariesFromCsv: part.folds
      ? { experimentSummary: part.folds.experimentSummary, configSummary: part.folds.configSummary }
      : null,
  };
}

/**
 * The compliance Markdown, and the HTML rendered from it (same numbers by construction); the Markdown
 * stays in staging unlisted, so unpublished, when only the HTML was asked for.
 */
async function writeCompliance(
  parts: ReportPart[],
  staging: string,
  args: ReportArgs,
): Promise<WrittenFile[]> {
  const files: WrittenFile[] = [];
  const names = reportFileNames(args.period);
  const path = join(staging, names.compliance);
  if (parts.length === 1) {
    const part = parts[0]!;
    part.counts.records = (await writeComplianceMarkdown(path, complianceContext(part, args))).records;
  } else {
    const sections = parts.map((part, index) => ({
      ctx: { ...complianceContext(part, args), project: { name: part.project, index } },
      store: part.store,
    }));
    const results = await writeProjectsCompliance(path, sections);
    results.forEach((result, i) => {
      parts[i]!.counts.records = result.records;
    });
  }
  const records = parts.reduce((sum, part) => sum + part.counts.records, 0);
  if (args.formats.has("md")) files.push({ name: names.compliance, rows: records });
  if (args.formats.has("html")) {
    writeComplianceHtml(path, join(staging, names.complianceHtml));
    files.push({ name: names.complianceHtml, rows: records });
  }
  return files;
}

/**
 * A CSV row as a row of its summary query (experimentSummary, configSummary, unreviewedSummary): one change
 * of its entity, person and type, with its rule changes (only the config edits' CSV query counts them).
 */
function summaryEntry(row: CsvRow): EntitySummaryRow {
  return {
    name: row.name,
    updated_by: row.updated_by,
    action_type: row.action_type,
    changes: 1,
    rule_changes: row.rule_changes ?? 0,
    first_at: row.occurred_at,
    last_at: row.occurred_at,
  };
}

/**
 * A period no sync ever covered (no server-day counts stored for any of its days) yields a report as
 * empty as a quiet period's: say which it is, first.
 */
async function coverageNotice(
  snapshot: ReportSnapshot,
  period: Period,
  params: ReportParams,
): Promise<string | null> {
  if (params.serverFromDay !== null && (await snapshot.rows("coverage", params)).length > 0) return null;
  return (
    `No synced coverage: no day of ${period.from} to ${period.to} was ever checked by a sync, ` +
    "so an empty section here does not mean that nothing happened; sync these days first."
  );
}
