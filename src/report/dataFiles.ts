// The data files of a report set (CSVs, compliance Markdown, its HTML), written into the staging
// directory from the projects' snapshots: one project's as ever, several projects' combined into the
// same files (src/report/projects.ts).
import { join } from "node:path";
import { VERSION } from "../version.ts";
import { type ComplianceContext, writeComplianceMarkdown } from "./compliance.ts";
import { writeComplianceHtml } from "./html.ts";
import { isoFormatter } from "./period.ts";
import { type ProjectSnapshot, writeProjectsCompliance } from "./projects.ts";
import { writeCsvs, writeFindingsCsv } from "./reportCsvs.ts";
import {
  type ReportArgs,
  type ReportCounts,
  type ReportPart,
  readPart,
  reportFileNames,
  type WrittenFile,
} from "./reportParts.ts";

export interface Written {
  parts: ReportPart[];
  files: WrittenFile[];
  /** Over every project. */
  counts: ReportCounts;
}

/** Every data file of the set, into `staging`, each project's part from its own snapshot. */
export async function writeFiles(
  snapshots: readonly ProjectSnapshot[],
  staging: string,
  args: ReportArgs,
): Promise<Written> {
  const parts: ReportPart[] = [];
  for (const taken of snapshots) parts.push(await readPart(taken, args));
  const compliance = args.formats.has("md") || args.formats.has("html");
  const files: WrittenFile[] = [];
  if (args.formats.has("csv")) files.push(...(await writeCsvs(parts, staging, args)));
  if (args.formats.has("csv") && parts.some((p) => p.controls))
    files.push(await writeFindingsCsv(parts, staging, args));
  if (compliance) files.push(...(await writeCompliance(parts, staging, args)));
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
    coverage: part.coverage,
    controls: part.controls,
    csvFiles: args.formats.has("csv") ? reportFileNames(args.period) : null,
    unreviewedFromCsv: part.folds
      ? { count: part.counts.unreviewedChanges, entities: part.folds.unreviewed }
      : null,
    summariesFromCsv: part.folds
      ? { experimentSummary: part.folds.experimentSummary, configSummary: part.folds.configSummary }
      : null,
  };
}

/**
 * The compliance Markdown (its long tables capped: sections/capped.ts) and the HTML, rendered from the
 * same document with every row, both written in one pass over the rows. The complete document stays in
 * staging unlisted, so unpublished.
 */
async function writeCompliance(
  parts: ReportPart[],
  staging: string,
  args: ReportArgs,
): Promise<WrittenFile[]> {
  const files: WrittenFile[] = [];
  const names = reportFileNames(args.period);
  const paths = {
    capped: args.formats.has("md") ? join(staging, names.compliance) : null,
    complete: args.formats.has("html") ? join(staging, `complete-${names.compliance}`) : null,
  };
  if (parts.length === 1) {
    const part = parts[0]!;
    part.counts.records = (await writeComplianceMarkdown(paths, complianceContext(part, args))).records;
  } else {
    const sections = parts.map((part, index) => ({
      ctx: { ...complianceContext(part, args), project: { name: part.project, index } },
      store: part.store,
    }));
    const results = await writeProjectsCompliance(paths, sections);
    results.forEach((result, i) => {
      parts[i]!.counts.records = result.records;
    });
  }
  const records = parts.reduce((sum, part) => sum + part.counts.records, 0);
  if (paths.capped !== null) files.push({ name: names.compliance, rows: records });
  if (paths.complete !== null) {
    writeComplianceHtml(paths.complete, join(staging, names.complianceHtml));
    files.push({ name: names.complianceHtml, rows: records });
  }
  return files;
}
