// A report over several projects of one store: one set of files for them all. Each project's part
// is read from a snapshot of its own namespace, all of them held open together; the CSVs take a first
// column `project` and every project's rows in turn; the compliance Markdown says which projects it
// covers and how complete each is, then gives each project's whole document as a section of its own.
import type { ProjectStore } from "../store/projectStores.ts";
import { type ReportSnapshot, readReportSnapshot } from "../store/reportQueries.ts";
import {
  type ComplianceContext,
  type ComplianceResult,
  readSummary,
  type SummaryRead,
  writeComplianceDocument,
} from "./compliance.ts";
import type { CsvColumn } from "./csv.ts";
import type { ManifestStoreState } from "./manifest.ts";
import { pacedSnapshot } from "./paced.ts";
import { MarkdownOut, type MarkdownPaths } from "./sections/markdown.ts";
import { writeProjectsOverview } from "./sections/projects.ts";

export interface ProjectSnapshot {
  project: string;
  snapshot: ReportSnapshot;
}

/**
 * Runs `read` with a consistent snapshot of each project's namespace, all open at once (each in its
 * own read transaction, nested), so every project's files come from one moment of that project. Each
 * is paced (./paced.ts): a signal stops the report between two batches or reads.
 */
export async function withProjectSnapshots<T>(
  stores: readonly ProjectStore[],
  read: (snapshots: ProjectSnapshot[]) => Promise<T>,
  taken: readonly ProjectSnapshot[] = [],
): Promise<T> {
  const next = stores[taken.length];
  if (next === undefined) return read([...taken]);
  return readReportSnapshot(next.store, (snapshot) =>
    withProjectSnapshots(stores, read, [
      ...taken,
      { project: next.project, snapshot: pacedSnapshot(snapshot) },
    ]),
  );
}

/** A row of a combined CSV: one project's row, with the project it came from. */
export interface ProjectRow<P extends { project: string }, Row> {
  part: P;
  row: Row;
}

/** One project's columns, after a first column naming the project. */
export function projectColumns<P extends { project: string }, Row>(
  columns: readonly CsvColumn<Row>[],
): CsvColumn<ProjectRow<P, Row>>[] {
  return [
    { header: "project", value: (r) => r.part.project },
    ...columns.map((c) => ({ header: c.header, value: (r: ProjectRow<P, Row>) => c.value(r.row) })),
  ];
}

/** Every project's row batches in turn, in the projects' order, each row with its project. */
export async function* projectBatches<P extends { project: string }, Row>(
  parts: readonly P[],
  batchesOf: (part: P) => AsyncIterable<readonly Row[]>,
): AsyncGenerator<ProjectRow<P, Row>[]> {
  for (const part of parts) {
    for await (const batch of batchesOf(part)) yield batch.map((row) => ({ part, row }));
  }
}

export interface ProjectSection {
  /** The project's document context, with `project` set. */
  ctx: ComplianceContext;
  /** The project's namespace as the snapshot read it. */
  store: ManifestStoreState;
}

/**
 * The combined compliance Markdown: every project's summary is read first (the overview states each
 * project's completeness), then each project's document follows, written by the same sections.
 */
export async function writeProjectsCompliance(
  paths: MarkdownPaths,
  sections: readonly ProjectSection[],
): Promise<ComplianceResult[]> {
  const out = MarkdownOut.open(paths);
  try {
    const reads: SummaryRead[] = [];
    for (const { ctx } of sections) reads.push(await readSummary(ctx));
    writeProjectsOverview(
      out,
      sections.map((section, i) => ({ ...section, summary: reads[i]! })),
    );
    const results: ComplianceResult[] = [];
    for (const [i, { ctx }] of sections.entries())
      results.push(await writeComplianceDocument(out, ctx, reads[i]!));
    return results;
  } finally {
    out.close();
  }
}
