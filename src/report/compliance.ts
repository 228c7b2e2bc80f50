// compliance_<from>_<to>.md: the period's completeness, activity, timelines, rule diffs, reviews and
// mutations, each section followed by the query behind it. Long sections are streamed row by row
// into a buffered file writer, so memory does not grow with the period.
import { writeConfigEdits } from "./sections/configEdits.ts";
import { type ComplianceContext, run, TextFile } from "./sections/markdown.ts";
import { writeMutations } from "./sections/mutations.ts";
import {
  type ActionTypeCount,
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

export function writeComplianceMarkdown(path: string, ctx: ComplianceContext): ComplianceResult {
  const out = new TextFile(path);
  try {
    // The per-type counts also give the header its total: one pass over the period instead of two.
    const byType = run<ActionTypeCount>(ctx, "byActionType");
    const records = byType.reduce((sum, r) => sum + r.records, 0);
    writeHeader(out, ctx, records);
    writeCompleteness(out, ctx);
    writeActivity(out, ctx, byType);
    writeDaily(out, ctx);
    writeExperimentTimelines(out, ctx);
    writeConfigEdits(out, ctx);
    writeReviews(out, ctx);
    writeMutations(out, ctx);
    return { records };
  } finally {
    out.close();
  }
}
