// `flagtrail report` as a function (also called by the daemon and the demo): CSVs (experiment state
// changes, config edits, changes with no approved review), the compliance Markdown and the signed
// manifest for one period, read from one consistent snapshot of the store.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Control } from "../controls/config.ts";
import { signChainHead } from "../digests.ts";
import { asDiskFull, FlagtrailError, ReportExistsError } from "../errors.ts";
import { DEFAULT_PROJECT } from "../projects.ts";
import { CHAIN_HEAD_SIGNATURE_KEY } from "../store/digests.ts";
import { readMetaValue } from "../store/metaStore.ts";
import type { AnyStore } from "../store/openAny.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../store/projectStores.ts";
import { VERSION } from "../version.ts";
import { type Written, writeFiles } from "./dataFiles.ts";
import { REPORT_FORMATS, type ReportFormat } from "./formats.ts";
import {
  hashFile,
  MANIFEST_FORMAT,
  MANIFEST_FORMAT_PROJECTS,
  type ManifestBody,
  type ManifestFile,
  type ManifestReplaced,
  serializeManifest,
  signManifest,
} from "./manifest.ts";
import { isoFormatter, type Period, resolvePeriod } from "./period.ts";
import { withProjectSnapshots } from "./projects.ts";
import {
  createStaging,
  makeOutDir,
  type PublishHook,
  publishReportSet,
  removeStaging,
  removeStale,
  writeDurable,
} from "./publish.ts";
import { lockPublishing } from "./publishLock.ts";
import { type ReportArgs, type ReportCounts, reportFileNames } from "./reportParts.ts";
import { keepEarlierGenerationTime } from "./rerun.ts";
import { generatedAtText } from "./sections/summary.ts";

export interface ReportOptions {
  /**
   * An open store (one project's part of one), or the path of one, opened read-only (a report writes
   * nothing to the store): then every project it holds, or only `project`.
   */
  store?: AnyStore;
  dbPath?: string;
  /** Only this project of the store (named in the manifest unless it is `default`). */
  project?: string;
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
  /** HMAC key for the manifest (the caller reads FLAGTRAIL_SIGNING_KEY). Never written anywhere. */
  signingKey?: string;
  /**
   * Replace files of an earlier report of the same period whose content differs (the manifest lists
   * them). Default false: such a file makes the run fail before anything is published.
   */
  force?: boolean;
  /** The config's controls: the compliance report opens with them, and a findings CSV is written. */
  controls?: readonly Control[] | null;
  /** Tests: called before each publishing step, to simulate a crash there by throwing. */
  publishHook?: PublishHook;
}

interface ReportFileResult extends ManifestFile {
  path: string;
}

export interface ReportResult {
  period: Period;
  files: ReportFileResult[];
  manifestPath: string;
  /** Over every project the report covers. */
  counts: ReportCounts;
  signed: boolean;
  /**
   * The period's earlier manifest was signed and this one is not (no key given): its signature is gone.
   * Callers warn; the new manifest is what the files now match, so it is written all the same.
   */
  replacedSignature: boolean;
  /**
   * Projects whose chain head is not signed with the manifest's key (the store was last written without
   * it): `verify` with the key fails on their store until a sync with the key signs the head. Empty
   * without a key.
   */
  unsignedHeads: string[];
  /**
   * Set when no day of the period was ever checked by a sync (per project, one line each, when the
   * report covers several): empty sections prove nothing then.
   */
  notice: string | null;
}

export async function writeReports(options: ReportOptions): Promise<ReportResult> {
  const period = resolvePeriod(options.from, options.to, options.timeZone ?? "UTC");
  const args: ReportArgs = {
    period,
    formats: new Set<ReportFormat>(options.formats ?? ["csv", "md"]),
    actionTypes: options.actionTypes && options.actionTypes.length > 0 ? [...options.actionTypes] : null,
    generatedAt: new Date(options.generatedAt ?? Date.now()).toISOString(),
    bom: options.bom ?? true,
    controls: options.controls && options.controls.length > 0 ? options.controls : null,
  };
  if (!options.store && !options.dbPath) throw new FlagtrailError("writeReports needs a store or a dbPath");
  const stores: ProjectStore[] = options.store
    ? [{ project: options.project ?? DEFAULT_PROJECT, store: options.store }]
    : await openStoreProjects(options.dbPath!, { readonly: true, project: options.project });
  try {
    makeOutDir(options.outDir);
    return await writeInto(stores, options, args, period);
  } catch (error) {
    // A write's ENOSPC names no file (the syscall is `write` on a descriptor): name the directory.
    throw asDiskFull(error, options.outDir) ?? error;
  } finally {
    if (!options.store) await closeProjectStores(stores);
  }
}

/** Stages the period's files in `options.outDir`, then publishes them under its lock. */
async function writeInto(
  stores: ProjectStore[],
  options: ReportOptions,
  args: ReportArgs,
  period: Period,
): Promise<ReportResult> {
  removeStale(options.outDir);
  const staging = createStaging(options.outDir);
  try {
    const written = await withProjectSnapshots(stores, (snapshots) => writeFiles(snapshots, staging, args));
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
    // From the check for an earlier report to the last rename: one run at a time in this directory.
    const unlock = await lockPublishing(options.outDir);
    try {
      const result = await publish(files, staging, options, args, written, period);
      return { ...result, unsignedHeads: await unsignedHeads(stores, written, options.signingKey) };
    } finally {
      unlock();
    }
  } finally {
    removeStaging(staging);
  }
}

function noticeOf({ parts }: Written): string | null {
  if (parts.length === 1) return parts[0]!.notice;
  const lines = parts.filter((p) => p.notice !== null).map((p) => `${p.project}: ${p.notice}`);
  return lines.length > 0 ? lines.join("\n") : null;
}

/** Checks for an earlier report's files, writes the manifest and moves the staged set into place. */
async function publish(
  stagedFiles: readonly ReportFileResult[],
  staging: string,
  options: ReportOptions,
  reportArgs: ReportArgs,
  written: Written,
  period: Period,
): Promise<Omit<ReportResult, "unsignedHeads">> {
  let files = stagedFiles;
  let args = reportArgs;
  const manifestName = reportFileNames(period).manifest;
  const names = { data: files.map((f) => f.name), manifest: manifestName };
  const formatTime = isoFormatter(period.timeZone);
  const shown = (iso: string) => generatedAtText(iso, formatTime);
  const kept = keepEarlierGenerationTime(staging, options.outDir, names, args.generatedAt, shown);
  if (kept !== null) {
    args = { ...args, generatedAt: kept.earlier };
    const rewritten = new Set(kept.rewritten);
    files = await Promise.all(
      files.map(async (f) =>
        rewritten.has(f.name) ? { ...f, ...(await hashFile(join(staging, f.name))) } : f,
      ),
    );
  }
  const replaced = await filesToReplace(files, options.force ?? false);
  const manifest = signManifest(
    manifestBody(args, files, written, replaced, options.project),
    options.signingKey,
  );
  writeDurable(join(staging, manifestName), serializeManifest(manifest));
  const replacedSignature =
    manifest.signature === undefined && isSignedManifest(join(options.outDir, manifestName));
  publishReportSet(staging, options.outDir, names, options.publishHook);
  return {
    period,
    files: [...files],
    manifestPath: join(options.outDir, manifestName),
    counts: written.counts,
    signed: manifest.signature !== undefined,
    replacedSignature,
    notice: noticeOf(written),
  };
}

/** Whether the manifest at `path` carries a signature; false when it is missing or unreadable. */
function isSignedManifest(path: string): boolean {
  try {
    const earlier = JSON.parse(readFileSync(path, "utf8")) as { signature?: unknown } | null;
    return typeof earlier?.signature === "object" && earlier.signature !== null;
  } catch {
    return false;
  }
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
    if (!force) throw new ReportExistsError(file.path);
    replaced.push({ name: file.name, ...old });
  }
  return replaced;
}

/** Format 1 for one project's report (naming a project other than default asked for); 2 for several. */
function manifestBody(
  args: ReportArgs,
  files: readonly ReportFileResult[],
  written: Written,
  replaced: ManifestReplaced,
  project: string | undefined,
): ManifestBody {
  const { period } = args;
  const common = {
    flagtrailVersion: VERSION,
    generatedAt: args.generatedAt,
    parameters: {
      from: period.from,
      to: period.to,
      timeZone: period.timeZone,
      actionTypes: args.actionTypes,
      formats: REPORT_FORMATS.filter((f) => args.formats.has(f)),
      ...(project !== undefined && project !== DEFAULT_PROJECT ? { project } : {}),
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
  };
  const [single, ...others] = written.parts;
  if (others.length === 0) return { format: MANIFEST_FORMAT, ...common, store: single!.store };
  const projects = written.parts.map((p) => ({ project: p.project, ...p.store }));
  return { format: MANIFEST_FORMAT_PROJECTS, ...common, store: { projects } };
}

/** The projects whose stored chain-head signature is missing or not the key's for the head reported. */
async function unsignedHeads(
  stores: readonly ProjectStore[],
  written: Written,
  key: string | undefined,
): Promise<string[]> {
  if (!key) return [];
  const unsigned: string[] = [];
  for (const part of written.parts) {
    const head = part.store.chainHead;
    const store = stores.find((s) => s.project === part.project)?.store;
    if (head === null || store === undefined) continue;
    const stored = await readMetaValue(store, CHAIN_HEAD_SIGNATURE_KEY);
    if (stored !== signChainHead(head, key)) unsigned.push(part.project);
  }
  return unsigned;
}
