// The executive summary: what an auditor reads first. Every count links to the section that lists it.
import type { MutationCount } from "../../store/reportQueries.ts";
import { mdTable, mdText } from "../escape.ts";
import { type Completeness, completenessVerdict } from "./completeness.ts";
import type { ComplianceContext, TextFile } from "./markdown.ts";
import type { ReviewFindings } from "./reviews.ts";

export interface Summary {
  records: number;
  entities: number;
  people: number;
  completeness: Completeness;
  reviews: ReviewFindings;
  mutations: MutationCount;
}

/**
 * The sections' anchors as GitHub, GitLab and most renderers derive them from the headings (lower case,
 * punctuation dropped, spaces to hyphens); the headings below must keep these words.
 */
export const ANCHORS = {
  completeness: "completeness",
  unreviewed: "changes-with-no-approved-review-before-them",
  selfApprovals: "reviews-approved-by-their-own-author",
  rejected: "rejected-reviews",
  mutations: "records-mutated-under-the-same-id",
} as const;

function link(count: number, anchor: string): string {
  return `[${count}](#${anchor})`;
}

export function writeSummary(out: TextFile, ctx: ComplianceContext, s: Summary): void {
  const { period } = ctx;
  const { reviews, mutations } = s;
  out.line(`# Compliance report ${period.from} to ${period.to}`);
  out.line();
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
        ["Completeness", `${completenessVerdict(s.completeness)} [Details](#${ANCHORS.completeness})`],
        ["Changes without an approved review", link(reviews.unreviewed, ANCHORS.unreviewed)],
        ["Self-approvals", link(reviews.selfApprovals.length, ANCHORS.selfApprovals)],
        ["Rejected reviews", link(reviews.rejected.length, ANCHORS.rejected)],
        [
          "Mutated records",
          `${link(mutations.records, ANCHORS.mutations)} (${mutations.revisions} later ${mutations.revisions === 1 ? "version" : "versions"})`,
        ],
      ],
    ),
  );
  out.line();
  out.line(
    "Findings (completeness, reviews, mutations) are listed in full below. The descriptive lists (experiment " +
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
