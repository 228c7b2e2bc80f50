// The executive summary: what an auditor reads first. Every count links to the section that lists it.
import type { MutationCount } from "../../store/reportQueries.ts";
import { mdTable, mdText } from "../escape.ts";
import { type Completeness, completenessVerdict } from "./completeness.ts";
import {
  anchor,
  type ComplianceContext,
  HEADINGS,
  heading,
  type MarkdownOut,
  projectHeading,
} from "./markdown.ts";
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
function link(ctx: ComplianceContext, count: number | string, text: string): string {
  return `[${count}](${anchor(ctx, text)})`;
}

/** The document's title (a project's heading in a report over several) and its notice. */
export function writeTitle(out: MarkdownOut, ctx: ComplianceContext): void {
  const { period } = ctx;
  const title = `Compliance report ${period.from} to ${period.to}`;
  heading(out, ctx, 1, ctx.project ? projectHeading(ctx.project.name) : title);
  out.line();
  // A period no sync covered would look as clean as a quiet one: say so before anything else.
  if (ctx.notice) {
    out.line(`> **${mdText(ctx.notice)}**`);
    out.line();
  }
}

export function writeSummary(out: MarkdownOut, ctx: ComplianceContext, s: Summary): void {
  const { period } = ctx;
  const { reviews, mutations } = s;
  heading(out, ctx, 2, "Summary");
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
        [
          "Completeness",
          `${completenessVerdict(s.completeness)} ${link(ctx, "Details", HEADINGS.completeness)}`,
        ],
        [
          "Changes without an approved review",
          link(ctx, reviews.unreviewed, HEADINGS.unreviewed) +
            (unreviewedSummarised(reviews)
              ? ` (summarised per entity; every one in the ${UNREVIEWED_CSV} CSV)`
              : ""),
        ],
        ["Self-approvals", link(ctx, reviews.selfApprovals.length, HEADINGS.selfApprovals)],
        ["Rejected reviews", link(ctx, reviews.rejected.length, HEADINGS.rejected)],
        [
          "Mutated records",
          `${link(ctx, mutations.records, HEADINGS.mutations)} (${mutations.revisions} later ${mutations.revisions === 1 ? "version" : "versions"})`,
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
      "their SHA-256. A long descriptive table of this Markdown shows its most relevant rows and says so " +
      "above and below it: how many of how many, and the CSV holding them all (the HTML rendition shows " +
      "every row). Times are shown in the report's time zone. Each section ends with the SQL behind it and its " +
      `parameters as \`--param name=value\` arguments: \`flagtrail sql --db <store>${ctx.project ? ` --project ${ctx.project.name}` : ""} --param … "<query>"\` ` +
      "re-runs it on the store.",
  );
  out.line();
}

/**
 * The generation time as the report prints it: in the report's format, and exact (epoch ms) as the
 * bounds are. A re-run finds this text to keep the earlier time (rerun.ts): the epoch ms make it the
 * generation time's alone, not an event's of the same second.
 */
export function generatedAtText(generatedAt: string, formatTime: (ms: number) => string): string {
  const ms = Date.parse(generatedAt);
  return `${formatTime(ms)} (${ms})`;
}

/** The old header's details, at the end: exact bounds, generation time, version. */
export function writeParameters(out: MarkdownOut, ctx: ComplianceContext): void {
  const { period } = ctx;
  heading(out, ctx, 2, "Report parameters");
  out.line();
  out.line(
    mdTable(
      ["Item", "Value"],
      [
        ["Time zone", mdText(period.timeZone)],
        ["From (inclusive)", `${ctx.formatTime(period.start)} (${period.start})`],
        ["To (exclusive)", `${ctx.formatTime(period.end)} (${period.end})`],
        ["Generated at", generatedAtText(ctx.generatedAt, ctx.formatTime)],
        ["flagtrail", mdText(ctx.version)],
      ],
    ),
  );
}
