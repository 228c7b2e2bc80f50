// compliance_<from>_<to>.md: the period's completeness, activity, timelines, rule diffs, reviews and
// mutations, each section followed by the query behind it. Long sections are streamed row by row
// into a buffered file writer, a batch of rows at a time, so memory does not grow with the period.
import { writeConfigEdits } from "./sections/configEdits.ts";
import { type ComplianceContext, run, TextFile } from "./sections/markdown.ts";
import { writeMutations } from "./sections/mutations.ts";
import {
  writeActivity,
  writeCompleteness,
  writeDaily,
  writeExperimentTimelines,
  writeHeader,
} from "./sections/overview.ts";
import { writeReviews } from "./sections/reviews.ts";

export type { ComplianceContext } from "./sections/markdown.ts";

export interface ComplianceResult {
  /** Records of the period (after the action-type filter) that the report covers. */
  records: number;
}

export async function writeComplianceMarkdown(
  path: string,
  ctx: ComplianceContext,
): Promise<ComplianceResult> {
  const out = new TextFile(path);
  try {
    // The per-type counts also give the header its total: one pass over the period instead of two.
    const byType = await run(ctx, "byActionType");
    const records = byType.reduce((sum, r) => sum + r.records, 0);
    writeHeader(out, ctx, records);
    await writeCompleteness(out, ctx);
    await writeActivity(out, ctx, byType);
    await writeDaily(out, ctx);
    await writeExperimentTimelines(out, ctx);
    await writeConfigEdits(out, ctx);
    await writeReviews(out, ctx);
    await writeMutations(out, ctx);
    return { records };
  } finally {
    out.close();
  }
}
