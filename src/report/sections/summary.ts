// The executive summary: what an auditor reads first. Every count links to the section that lists it.
import type { MutationCount } from "../../store/reportQueries.ts";
import { mdTable, mdText } from "../escape.ts";
import { type Completeness, completenessVerdict } from "./completeness.ts";
import { type ComplianceContext, HEADINGS, headingSlug, type TextFile } from "./markdown.ts";
import {
  FINDINGS_LISTED_IN_FULL,
  type ReviewFindings,
  UNREVIEWED_CSV,
  unreviewedSummarised,
} from "./reviews.ts";

export interface Summary {
  records: number;
  entities: number;
  people: number;
  completeness: Completeness;
  reviews: ReviewFindings;
  mutations: MutationCount;
}

/** A count linking to the section that lists it. */
function link(count: number | string, heading: string): string {
  return `[${count}](#${headingSlug(heading)})`;
}

export function writeSummary(out: TextFile, ctx: ComplianceContext, s: Summary): void {
  const { period } = ctx;
  const { reviews, mutations } = s;
  out.line(`# Compliance report ${period.from} to ${period.to}`);
  out.line();
  // A period no sync covered would look as clean as a quiet one: say so before anything else.
  if (ctx.notice) {
    out.line(`> **${mdText(ctx.notice)}**`);
    out.line();
  }
  out.line("## Summary");
  out.line();
  out.line(
    mdTable(
      ["Item", "Value"],
      [
        ["Period", `${period.from} to ${period.to}, both days included, in ${mdText(period.timeZone)}`],
        ["Action types", ctx.actionTypes ? ctx.actionTypes.map(mdText).join(", ") : "all"],
        ["Records", String(s.records)],
        ["Entities", String(s.entities)],
        ["People", String(s.people)],
        ["Completeness", `${completenessVerdict(s.completeness)} ${link("Details", HEADINGS.completeness)}`],
        [
          "Changes without an approved review",
          link(reviews.unreviewed, HEADINGS.unreviewed) +
            (unreviewedSummarised(reviews)
              ? ` (summarised per entity; every one in the ${UNREVIEWED_CSV} CSV)`
              : ""),
        ],
        ["Self-approvals", link(reviews.selfApprovals.length, HEADINGS.selfApprovals)],
        ["Rejected reviews", link(reviews.rejected.length, HEADINGS.rejected)],
        [
          "Mutated records",
          `${link(mutations.records, HEADINGS.mutations)} (${mutations.revisions} later ${mutations.revisions === 1 ? "version" : "versions"})`,
        ],
      ],
    ),
  );
  out.line();
  out.line(
    "Findings (completeness, reviews, mutations) are listed in full below" +
      (unreviewedSummarised(reviews)
        ? `, except the changes without an approved review: more than ${FINDINGS_LISTED_IN_FULL}, they are ` +
          `summarised per entity, and every one is a row of this report's ${UNREVIEWED_CSV} CSV. `
        : `; the changes without an approved review are also a CSV of their own (${UNREVIEWED_CSV}). `) +
      "The descriptive lists (experiment " +
      "state changes, config edits) are summarised per entity: every change, with its rule-diff summary, is " +
      "a row of this report's experiment-state-changes and config-edits CSVs, which the manifest lists with " +
      "their SHA-256. Times are shown in the report's time zone. Each section ends with the SQL behind it and its " +
      'parameters as `--param name=value` arguments: `flagtrail sql --db <store> --param … "<query>"` ' +
      "re-runs it on the store.",
  );
  out.line();
}

/** The old header's details, at the end: exact bounds, generation time, version. */
export function writeParameters(out: TextFile, ctx: ComplianceContext): void {
  const { period } = ctx;
  out.line("## Report parameters");
  out.line();
  out.line(
    mdTable(
      ["Item", "Value"],
      [
        ["Time zone", mdText(period.timeZone)],
        ["From (inclusive)", `${ctx.formatTime(period.start)} (${period.start})`],
        ["To (exclusive)", `${ctx.formatTime(period.end)} (${period.end})`],
        ["Generated at", ctx.generatedAt],
        ["flagtrail", mdText(ctx.version)],
      ],
    ),
  );
}
