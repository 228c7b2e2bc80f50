// The review section: unreviewed changes, self-approvals, rejections.
import { mdRow, mdTable, mdText } from "../escape.ts";
import { REVIEW_WINDOW_DAYS } from "../reviews.ts";
import { type ComplianceContext, iterate, querySection, run, type TextFile, time } from "./markdown.ts";

export function writeReviews(out: TextFile, ctx: ComplianceContext): void {
  out.line("## Reviews");
  out.line();
  out.line("### Changes with no approved review before them");
  out.line();
  out.line(
    "An experiment state change or config edit counts as reviewed when an approval (a review accept " +
      `record, see REVIEW_FLOWS) for the same entity name exists at or up to ${REVIEW_WINDOW_DAYS} days ` +
      "before it. Creations and the review records themselves are exempt.",
  );
  out.line();
  let unreviewed = 0;
  for (const row of iterate<{
    occurred_at: number;
    name: string;
    action_type: string;
    category: string;
    updated_by: string | null;
  }>(ctx, "unreviewed")) {
    if (unreviewed === 0) {
      out.line(mdRow(["Time", "Entity", "Action type", "Category", "By"]));
      out.line(mdRow(["---", "---", "---", "---", "---"]));
    }
    unreviewed += 1;
    out.line(
      mdRow([
        time(ctx, row.occurred_at),
        mdText(row.name),
        mdText(row.action_type),
        mdText(row.category),
        mdText(row.updated_by),
      ]),
    );
  }
  if (unreviewed === 0) out.line("None.");
  querySection(out, "unreviewed");

  out.line("### Reviews approved by their own author");
  out.line();
  out.line(
    "An approval whose latest request of the same review flow for the same entity (up to " +
      `${REVIEW_WINDOW_DAYS} days earlier) was made by the same user id.`,
  );
  out.line();
  const self = run<{
    occurred_at: number;
    name: string;
    action_type: string;
    updated_by: string | null;
    updated_by_user_id: string | null;
    requested_at: number | null;
  }>(ctx, "selfApproved");
  if (self.length === 0) out.line("None.");
  else {
    out.line(
      mdTable(
        ["Approved at", "Entity", "Approval", "Approved by", "User id", "Requested at"],
        self.map((r) => [
          time(ctx, r.occurred_at),
          mdText(r.name),
          mdText(r.action_type),
          mdText(r.updated_by),
          mdText(r.updated_by_user_id),
          time(ctx, r.requested_at),
        ]),
      ),
    );
  }
  querySection(out, "selfApproved");

  out.line("### Rejected reviews");
  out.line();
  const rejected = run<{
    occurred_at: number;
    name: string;
    action_type: string;
    updated_by: string | null;
    change_log: string | null;
  }>(ctx, "rejected");
  if (rejected.length === 0) out.line("None.");
  else {
    out.line(
      mdTable(
        ["Time", "Entity", "Action type", "Rejected by", "Change log"],
        rejected.map((r) => [
          time(ctx, r.occurred_at),
          mdText(r.name),
          mdText(r.action_type),
          mdText(r.updated_by),
          mdText(r.change_log),
        ]),
      ),
    );
  }
  querySection(out, "rejected");
}
