// `flagtrail report` as a function (also called by the daemon and the demo): CSVs (experiment state
// changes, config edits, changes with no approved review), the compliance Markdown and the signed
// manifest for one period, read from one consistent snapshot of the store.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { FlagtrailError } from "../errors.ts";
import { type AnyStore, openAnyStore } from "../store/openAny.ts";
import {
  type CsvRow,
  type EntitySummaryRow,
  type ReportParams,
  type ReportSnapshot,
  readReportSnapshot,
} from "../store/reportQueries.ts";
import { VERSION } from "../version.ts";
import { writeComplianceMarkdown } from "./compliance.ts";
import { type CsvColumn, writeCsv } from "./csv.ts";
import { REPORT_FORMATS, type ReportFormat } from "./formats.ts";
import { writeComplianceHtml } from "./html.ts";
import {
  hashFile,
  MANIFEST_FORMAT,
  type Manifest,
  type ManifestFile,
  type ManifestReplaced,
  serializeManifest,
  signManifest,
} from "./manifest.ts";
import { isoFormatter, type Period, resolvePeriod } from "./period.ts";
import {
  createStaging,
  makeOutDir,
  type PublishHook,
  publishReportSet,
  removeStaging,
  removeStale,
  writeDurable,
} from "./publish.ts";
import {
  REJECTION_ACTION_TYPES,
  REVIEW_EXEMPT_ACTION_TYPES,
  REVIEW_FLOWS,
  REVIEW_WINDOW_MS,
} from "./reviews.ts";
import { EntityFold } from "./sections/entities.ts";
import { UNREVIEWED_CSV } from "./sections/reviews.ts";
import { serverDaysOf } from "./serverDays.ts";

export type { ReportFormat } from "./formats.ts";

export interface ReportOptions {
  /** An open store, or the path of one (opened read-only: a report writes nothing to the store). */
  store?: AnyStore;
  dbPath?: string;
  from: string;
  to: string;
  /** IANA zone the period's days are read in and times are shown in. Default UTC. */
  timeZone?: string;
  outDir: string;
  formats?: readonly ReportFormat[];
  /** Start each CSV with a UTF-8 byte-order mark (spreadsheets then read UTF-8 right). Default true. */
  bom?: boolean;
  /** Only these action types; default all. */
  actionTypes?: readonly string[] | null;
  /** The report's "generated at"; tests inject it so output is byte-stable. Default now. */
  generatedAt?: Date | number;
  /** HMAC key for the manifest; default process.env.FLAGTRAIL_SIGNING_KEY. Never written anywhere. */
  signingKey?: string;
  /**
   * Replace files of an earlier report of the same period whose content differs (the manifest lists
   * them). Default false: such a file makes the run fail before anything is published.
   */
  force?: boolean;
  /** Tests: called before each publishing step, to simulate a crash there by throwing. */
  publishHook?: PublishHook;
}

export interface ReportFileResult extends ManifestFile {
  path: string;
}

export interface ReportResult {
  period: Period;
  files: ReportFileResult[];
  manifestPath: string;
  counts: { experimentStateChanges: number; configEdits: number; unreviewedChanges: number; records: number };
  signed: boolean;
  /** Set when no day of the period was ever checked by a sync: empty sections prove nothing then. */
  notice: string | null;
}

function csvColumns(formatTime: (ms: number) => string): CsvColumn<CsvRow>[] {
  return [
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
}

/**
 * `<kind>_<from>_<to>[_<zone>].<ext>`: the same days read in another zone are another period, so a
 * zone other than UTC is part of the name (its slashes as dashes: Europe-Berlin).
 */
function reportFileNames(period: Period) {
  const zone = period.timeZone === "UTC" ? "" : `_${period.timeZone.replaceAll("/", "-")}`;
  const stem = `${period.from}_${period.to}${zone}`;
  return {
    experimentStateChanges: `experiment-state-changes_${stem}.csv`,
    configEdits: `config-edits_${stem}.csv`,
    unreviewedChanges: `${UNREVIEWED_CSV}_${stem}.csv`,
    compliance: `compliance_${stem}.md`,
    complianceHtml: `compliance_${stem}.html`,
    manifest: `manifest_${stem}.json`,
  };
}

export async function writeReports(options: ReportOptions): Promise<ReportResult> {
  const period = resolvePeriod(options.from, options.to, options.timeZone ?? "UTC");
  const args: ReportArgs = {
    period,
    formats: new Set<ReportFormat>(options.formats ?? ["csv", "md"]),
    actionTypes: options.actionTypes && options.actionTypes.length > 0 ? [...options.actionTypes] : null,
    generatedAt: new Date(options.generatedAt ?? Date.now()).toISOString(),
    bom: options.bom ?? true,
  };
  if (!options.store && !options.dbPath) throw new FlagtrailError("writeReports needs a store or a dbPath");
  const store = options.store ?? (await openAnyStore(options.dbPath!, { readonly: true }));
  try {
    makeOutDir(options.outDir);
    removeStale(options.outDir);
    const staging = createStaging(options.outDir);
    try {
      const written = await readReportSnapshot(store, (snapshot) => writeFiles(snapshot, staging, args));
      const files: ReportFileResult[] = [];
      for (const { name, rows, columns } of written.files) {
        files.push({
          name,
          path: join(options.outDir, name),
          rows,
          ...(columns ? { columns } : {}),
          ...(await hashFile(join(staging, name))),
        });
      }
      const replaced = await filesToReplace(files, options.force ?? false);
      const manifest = signManifest(
        manifestBody(args, files, written.store, replaced),
        options.signingKey ?? process.env.FLAGTRAIL_SIGNING_KEY,
      );
      const manifestName = reportFileNames(period).manifest;
      writeDurable(join(staging, manifestName), serializeManifest(manifest));
      publishReportSet(
        staging,
        options.outDir,
        { data: files.map((f) => f.name), manifest: manifestName },
        options.publishHook,
      );
      return {
        period,
        files,
        manifestPath: join(options.outDir, manifestName),
        counts: written.counts,
        signed: manifest.signature !== undefined,
        notice: written.notice,
      };
    } finally {
      removeStaging(staging);
    }
  } finally {
    if (!options.store) await store.close();
  }
}

interface ReportArgs {
  period: Period;
  formats: Set<ReportFormat>;
  actionTypes: string[] | null;
  generatedAt: string;
  bom: boolean;
}

interface Written {
  notice: string | null;
  files: { name: string; rows: number; columns?: string[] }[];
  counts: ReportResult["counts"];
  store: Manifest["store"];
}

/** Every data file of the set, into `staging`, from one snapshot of the store. */
async function writeFiles(snapshot: ReportSnapshot, staging: string, args: ReportArgs): Promise<Written> {
  const { period } = args;
  const formatTime = isoFormatter(period.timeZone);
  const names = reportFileNames(period);
  const chainHead = await snapshot.chainHead();
  const serverDays = await serverDaysOf(snapshot, period);
  const params: ReportParams = {
    start: period.start,
    end: period.end,
    actionTypes: args.actionTypes,
    days: period.days,
    rejects: REJECTION_ACTION_TYPES,
    exempt: REVIEW_EXEMPT_ACTION_TYPES,
    flows: REVIEW_FLOWS,
    reviewWindow: REVIEW_WINDOW_MS,
    serverFromDay: serverDays?.first.day ?? null,
    serverToDay: serverDays?.last.day ?? null,
  };
  const written: Written = {
    notice: await coverageNotice(snapshot, period, params),
    files: [],
    counts: { experimentStateChanges: 0, configEdits: 0, unreviewedChanges: 0, records: 0 },
    store: { records: await snapshot.storedRecords(), chainHead },
  };
  // The unreviewed changes' per-entity table is folded from their CSV's rows (see ComplianceContext).
  const unreviewed = args.formats.has("csv") ? new EntityFold() : null;
  if (args.formats.has("csv")) {
    const columns = csvColumns(formatTime);
    for (const [key, query] of [
      ["experimentStateChanges", "experimentStateChangesCsv"],
      ["configEdits", "configEditsCsv"],
      ["unreviewedChanges", "unreviewedCsv"],
    ] as const) {
      const onRow =
        key === "unreviewedChanges" ? (row: CsvRow) => unreviewed?.add(unreviewedEntry(row)) : undefined;
      const count = await writeCsv(join(staging, names[key]), columns, snapshot.batches(query, params), {
        bom: args.bom,
        onRow,
      });
      written.counts[key] = count;
      written.files.push({ name: names[key], rows: count, columns: columns.map((c) => c.header) });
    }
  }
  // The HTML is rendered from the Markdown (same numbers by construction), which stays in staging
  // unlisted, so unpublished, when only the HTML was asked for.
  if (args.formats.has("md") || args.formats.has("html")) {
    const result = await writeComplianceMarkdown(join(staging, names.compliance), {
      snapshot,
      period,
      serverDays,
      actionTypes: args.actionTypes,
      params,
      formatTime,
      generatedAt: args.generatedAt,
      version: VERSION,
      notice: written.notice,
      unreviewedFromCsv: unreviewed
        ? { count: written.counts.unreviewedChanges, entities: unreviewed }
        : null,
    });
    written.counts.records = result.records;
    if (args.formats.has("md")) written.files.push({ name: names.compliance, rows: result.records });
    if (args.formats.has("html")) {
      writeComplianceHtml(join(staging, names.compliance), join(staging, names.complianceHtml));
      written.files.push({ name: names.complianceHtml, rows: result.records });
    }
  } else {
    written.counts.records = (await snapshot.rows("recordCount", params))[0]?.records ?? 0;
  }
  return written;
}

/** An unreviewed change as a row of the unreviewedSummary query: one change of its entity, person and type. */
function unreviewedEntry(row: CsvRow): EntitySummaryRow {
  return {
    name: row.name,
    updated_by: row.updated_by,
    action_type: row.action_type,
    changes: 1,
    rule_changes: 0,
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

/**
 * The files of an earlier report in the output directory that this one would overwrite with different content.
 * A report never replaces evidence silently: without `force` their existence fails the run (before
 * anything is published); with it, the manifest lists each replaced file's old size and hash.
 */
async function filesToReplace(files: readonly ReportFileResult[], force: boolean): Promise<ManifestReplaced> {
  const replaced: ManifestReplaced = [];
  for (const file of files) {
    if (!existsSync(file.path)) continue;
    const old = await hashFile(file.path);
    if (old.sha256 === file.sha256 && old.bytes === file.bytes) continue;
    if (!force) {
      throw new FlagtrailError(
        `${file.path} already exists with different content (an earlier report of this period); ` +
          "move it away, or force the replacement, which the manifest then records.",
      );
    }
    replaced.push({ name: file.name, ...old });
  }
  return replaced;
}

function manifestBody(
  args: ReportArgs,
  files: readonly ReportFileResult[],
  store: Manifest["store"],
  replaced: ManifestReplaced,
): Omit<Manifest, "signature"> {
  const { period } = args;
  return {
    format: MANIFEST_FORMAT,
    flagtrailVersion: VERSION,
    generatedAt: args.generatedAt,
    parameters: {
      from: period.from,
      to: period.to,
      timeZone: period.timeZone,
      actionTypes: args.actionTypes,
      formats: REPORT_FORMATS.filter((f) => args.formats.has(f)),
    },
    period: { start: period.start, end: period.end },
    files: files.map(({ name, rows, columns, bytes, sha256 }) => ({
      name,
      rows,
      ...(columns ? { columns } : {}),
      bytes,
      sha256,
    })),
    ...(replaced.length > 0 ? { replaced } : {}),
    store,
  };
}
