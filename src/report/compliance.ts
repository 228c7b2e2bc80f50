// compliance_<from>_<to>.md: the controls' findings first (when the config lists controls), an executive summary, then the findings in full (completeness,
// reviews, mutations), then the descriptive sections summarised (activity, the chart, changes per
// entity; every row is in the CSVs), each section followed by the query behind it. The summary's counts
// are read before anything is written; the long lists are streamed a batch of rows at a time into a
// buffered file writer, so memory does not grow with the period.
import type { ActionTypeCount, PersonCount } from "../store/reportQueries.ts";
import { readCompleteness, writeCompleteness } from "./sections/completeness.ts";
import { writeControlFindingLists, writeControls } from "./sections/controls.ts";
import { writeDaily } from "./sections/daily.ts";
import { CONFIG_SECTION, EXPERIMENT_SECTION, writeEntitySummary } from "./sections/entities.ts";
import { writeEntityHistory } from "./sections/entityHistory.ts";
import { type ComplianceContext, MarkdownOut, type MarkdownPaths, run } from "./sections/markdown.ts";
import { writeMutations } from "./sections/mutations.ts";
import { writeActivity } from "./sections/overview.ts";
import { readReviewFindings, writeReviews } from "./sections/reviews.ts";
import { type Summary, writeParameters, writeSummary, writeTitle } from "./sections/summary.ts";

export type { ComplianceContext } from "./sections/markdown.ts";

export interface ComplianceResult {
  /** Records of the period (after the action-type filter) that the report covers. */
  records: number;
  /** What the summary says, for other renditions of the same report. */
  summary: Summary;
}

/**
 * The document's reads that each go through every record of the period or of its review window (on a
 * 1M-record store's month, the server's slowest after the CSVs' read): writeFiles has the snapshot
 * start them (ahead) before the CSVs, whose writing takes the report's process meanwhile.
 */
export const SLOW_READS = ["byActionType", "byPerson", "entityCount", "daily", "reviewRecords"] as const;

export async function readSummary(
  ctx: ComplianceContext,
): Promise<Summary & { byType: ActionTypeCount[]; byPerson: PersonCount[] }> {
  // The per-type counts also give the total: one pass over the period instead of two.
  const byType = await run(ctx, "byActionType");
  const byPerson = await run(ctx, "byPerson");
  return {
    records: byType.reduce((sum, r) => sum + r.records, 0),
    entities: (await run(ctx, "entityCount"))[0]?.records ?? 0,
    people: byPerson.length,
    completeness: await readCompleteness({ ...ctx, now: Date.parse(ctx.generatedAt) }),
    reviews: await readReviewFindings(ctx),
    mutations: (await run(ctx, "mutationCount"))[0] ?? { records: 0, revisions: 0 },
    byType,
    byPerson,
  };
}

export type SummaryRead = Awaited<ReturnType<typeof readSummary>>;

export async function writeComplianceMarkdown(
  paths: MarkdownPaths,
  ctx: ComplianceContext,
): Promise<ComplianceResult> {
  const out = MarkdownOut.open(paths);
  try {
    return await writeComplianceDocument(out, ctx, await readSummary(ctx));
  } finally {
    out.close();
  }
}

/** The document, from its summary already read: a whole file, or one project's section of one. */
export async function writeComplianceDocument(
  out: MarkdownOut,
  ctx: ComplianceContext,
  read: SummaryRead,
): Promise<ComplianceResult> {
  const { byType, byPerson, ...summary } = read;
  writeTitle(out, ctx);
  if (ctx.controls) writeControls(out, ctx, ctx.controls);
  writeSummary(out, ctx, summary);
  writeCompleteness(out, ctx, summary.completeness);
  await writeReviews(out, ctx, summary.reviews);
  await writeMutations(out, ctx);
  await writeActivity(out, ctx, byType, byPerson);
  await writeDaily(out, ctx);
  await writeEntitySummary(out, ctx, EXPERIMENT_SECTION);
  await writeEntitySummary(out, ctx, CONFIG_SECTION);
  await writeEntityHistory(out, ctx);
  if (ctx.controls) writeControlFindingLists(out, ctx, ctx.controls);
  writeParameters(out, ctx);
  return { records: summary.records, summary };
}
