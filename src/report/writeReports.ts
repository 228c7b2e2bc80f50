// `flagtrail report` as a function (also called by the daemon and the demo): CSVs, the compliance
// Markdown and the signed manifest for one period, read from one consistent snapshot of the store.

import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FlagtrailError } from "../errors.ts";
import { sqliteOf } from "../store/connection.ts";
import { openStore, type Store } from "../store/open.ts";
import { backfillRuleDiffs } from "../store/ruleDiffs.ts";
import { VERSION } from "../version.ts";
import { writeComplianceMarkdown } from "./compliance.ts";
import { type CsvColumn, writeCsv } from "./csv.ts";
import {
  hashFile,
  MANIFEST_FORMAT,
  type Manifest,
  type ManifestFile,
  serializeManifest,
  signManifest,
} from "./manifest.ts";
import { isoFormatter, type Period, resolvePeriod } from "./period.ts";
import { paramsFor, QUERIES } from "./queries.ts";
import {
  APPROVAL_ACTION_TYPES,
  REJECTION_ACTION_TYPES,
  REVIEW_EXEMPT_ACTION_TYPES,
  REVIEW_FLOWS,
  REVIEW_WINDOW_MS,
} from "./reviews.ts";
import { serverDaysOf } from "./serverDays.ts";

export type ReportFormat = "csv" | "md";

const REPORT_CACHE_KIB = 65_536;

export interface ReportOptions {
  /** An open store, or the path of one (opened writable so rule diffs can be backfilled first). */
  store?: Store;
  dbPath?: string;
  from: string;
  to: string;
  /** IANA zone the period's days are read in and times are shown in. Default UTC. */
  timeZone?: string;
  outDir: string;
  formats?: readonly ReportFormat[];
  /** Only these action types; default all. */
  actionTypes?: readonly string[] | null;
  /** The report's "generated at"; tests inject it so output is byte-stable. Default now. */
  generatedAt?: Date | number;
  /** HMAC key for the manifest; default process.env.FLAGTRAIL_SIGNING_KEY. Never written anywhere. */
  signingKey?: string;
}

export interface ReportFileResult extends ManifestFile {
  path: string;
}

export interface ReportResult {
  period: Period;
  files: ReportFileResult[];
  manifestPath: string;
  counts: { experimentStateChanges: number; configEdits: number; records: number };
  signed: boolean;
}

interface CsvRow {
  occurred_at: number;
  id: string;
  updated_by: string | null;
  updated_by_user_id: string | null;
  modifier_email: string | null;
  name: string;
  action_type: string;
  change_log: string | null;
  rule_diff_summary: string | null;
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

function reportFileNames(from: string, to: string) {
  return {
    experimentStateChanges: `experiment-state-changes_${from}_${to}.csv`,
    configEdits: `config-edits_${from}_${to}.csv`,
    compliance: `compliance_${from}_${to}.md`,
    manifest: `manifest_${from}_${to}.json`,
  };
}

export async function writeReports(options: ReportOptions): Promise<ReportResult> {
  const period = resolvePeriod(options.from, options.to, options.timeZone ?? "UTC");
  const formats = new Set<ReportFormat>(options.formats ?? ["csv", "md"]);
  const actionTypes = options.actionTypes && options.actionTypes.length > 0 ? [...options.actionTypes] : null;
  const generatedAt = new Date(options.generatedAt ?? Date.now()).toISOString();
  const signingKey = options.signingKey ?? process.env.FLAGTRAIL_SIGNING_KEY;

  if (!options.store && !options.dbPath) throw new FlagtrailError("writeReports needs a store or a dbPath");
  // Opening for writing would create an empty store at a mistyped path and report on nothing.
  if (!options.store && options.dbPath !== ":memory:" && !existsSync(options.dbPath!)) {
    throw new FlagtrailError(`No flagtrail database at ${options.dbPath}. Run \`flagtrail sync\` first.`);
  }
  const store = options.store ?? openStore(options.dbPath!);
  try {
    // Records stored before rule diffing existed get their diffs now, so the report is complete.
    if (!sqliteOf(store).readonly) backfillRuleDiffs(store);
    makeOutDir(options.outDir);
    return await writeFromSnapshot(store, {
      period,
      formats,
      actionTypes,
      generatedAt,
      signingKey,
      outDir: options.outDir,
    });
  } finally {
    if (!options.store) store.close();
  }
}

interface SnapshotArgs {
  period: Period;
  formats: Set<ReportFormat>;
  actionTypes: string[] | null;
  generatedAt: string;
  signingKey: string | undefined;
  outDir: string;
}

async function writeFromSnapshot(store: Store, args: SnapshotArgs): Promise<ReportResult> {
  const sqlite = sqliteOf(store);
  const { period, outDir } = args;
  const formatTime = isoFormatter(period.timeZone);
  const names = reportFileNames(period.from, period.to);
  const params: Record<string, unknown> = {
    start: period.start,
    end: period.end,
    types: args.actionTypes ? JSON.stringify(args.actionTypes) : null,
    days: JSON.stringify(period.days),
    approvals: JSON.stringify(APPROVAL_ACTION_TYPES),
    rejects: JSON.stringify(REJECTION_ACTION_TYPES),
    exempt: JSON.stringify(REVIEW_EXEMPT_ACTION_TYPES),
    flows: JSON.stringify(REVIEW_FLOWS),
    reviewWindow: REVIEW_WINDOW_MS,
    reviewStart: period.start - REVIEW_WINDOW_MS,
  };

  const written: { name: string; rows: number }[] = [];
  const counts = { experimentStateChanges: 0, configEdits: 0, records: 0 };
  let records = 0;
  let head: { seq: number; chain_hash: string } | undefined;
  const temporary: string[] = [];
  // Each file is written under a temporary name and renamed at the end: a killed run never leaves a
  // file that looks complete.
  const tempPath = (name: string) => {
    const path = join(outDir, `.${name}.partial`);
    temporary.push(path);
    return path;
  };

  // The sections read the period's rows several times: a page cache that holds a month of rows keeps
  // that from going back to the file each time (64 MiB at most, whatever the store's size).
  const cacheSize = sqlite.pragma("cache_size", { simple: true }) as number;
  sqlite.pragma(`cache_size = ${-REPORT_CACHE_KIB}`);
  // One read transaction: every file describes the same snapshot, even while a sync is writing. (A
  // caller already inside a transaction has its own snapshot.)
  const ownTransaction = !sqlite.inTransaction;
  if (ownTransaction) sqlite.prepare("BEGIN").run();
  try {
    head = sqlite.prepare(QUERIES.chainHead).get() as typeof head;
    const serverDays = serverDaysOf(sqlite, period);
    params.serverFromDay = serverDays?.first.day ?? null;
    params.serverToDay = serverDays?.last.day ?? null;
    records = sqlite.prepare("SELECT count(*) FROM audit_logs").pluck().get() as number;
    if (args.formats.has("csv")) {
      const columns = csvColumns(formatTime);
      for (const [key, query] of [
        ["experimentStateChanges", QUERIES.experimentStateChangesCsv],
        ["configEdits", QUERIES.configEditsCsv],
      ] as const) {
        const rows = sqlite.prepare(query).iterate(paramsFor(query, params)) as IterableIterator<CsvRow>;
        const count = await writeCsv(tempPath(names[key]), columns, rows);
        counts[key] = count;
        written.push({ name: names[key], rows: count });
      }
    }
    if (args.formats.has("md")) {
      const result = writeComplianceMarkdown(tempPath(names.compliance), {
        sqlite,
        period,
        serverDays,
        actionTypes: args.actionTypes,
        params,
        formatTime,
        generatedAt: args.generatedAt,
        version: VERSION,
      });
      counts.records = result.records;
      written.push({ name: names.compliance, rows: result.records });
    } else {
      counts.records = sqlite
        .prepare(QUERIES.recordCount)
        .pluck()
        .get(paramsFor(QUERIES.recordCount, params)) as number;
    }
  } catch (error) {
    for (const path of temporary) rmSync(path, { force: true });
    throw error;
  } finally {
    if (ownTransaction) sqlite.prepare("COMMIT").run();
    sqlite.pragma(`cache_size = ${cacheSize}`);
  }

  const files: ReportFileResult[] = [];
  for (const { name, rows } of written) {
    const path = join(outDir, name);
    renameSync(join(outDir, `.${name}.partial`), path);
    files.push({ name, path, rows, ...(await hashFile(path)) });
  }

  const manifest: Manifest = signManifest(
    {
      format: MANIFEST_FORMAT,
      flagtrailVersion: VERSION,
      generatedAt: args.generatedAt,
      parameters: {
        from: period.from,
        to: period.to,
        timeZone: period.timeZone,
        actionTypes: args.actionTypes,
        formats: (["csv", "md"] as const).filter((f) => args.formats.has(f)),
      },
      period: { start: period.start, end: period.end },
      files: files.map(({ name, rows, bytes, sha256 }) => ({ name, rows, bytes, sha256 })),
      store: { records, chainHead: head ? { seq: head.seq, chainHash: head.chain_hash } : null },
    },
    args.signingKey,
  );
  const manifestPath = join(outDir, names.manifest);
  const manifestTemp = tempPath(names.manifest);
  writeFileSync(manifestTemp, serializeManifest(manifest), { mode: 0o600 });
  renameSync(manifestTemp, manifestPath);

  return { period, files, manifestPath, counts, signed: manifest.signature !== undefined };
}

function makeOutDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    throw new FlagtrailError(`Cannot create the report directory ${dir} (${code}): is a file in the way?`, {
      cause: error,
    });
  }
}
