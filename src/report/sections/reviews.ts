// The review section: unreviewed changes, self-approvals, rejections.

import { FlagtrailError } from "../../errors.ts";
import type { TimelineRow } from "../../store/reportQueries.ts";
import { mdRow, mdTable, mdText } from "../escape.ts";
import { approvalPairer, isSelfApproval, type ReviewPair } from "../reviewPairing.ts";
import { REVIEW_FLOWS, REVIEW_WINDOW_DAYS } from "../reviews.ts";
import { writeEntityTable } from "./entities.ts";
import {
  batches,
  type ComplianceContext,
  HEADINGS,
  heading,
  type MarkdownOut,
  querySection,
  run,
  time,
} from "./markdown.ts";

/**
 * A finding list up to this many rows is listed in full; a longer one is summarised per entity, its rows
 * in a CSV. 200 rows (~25 KB of Markdown) is still a list a reader scans in minutes and keeps a month
 * well under ~150 KB; past it, nobody reads row by row, and a per-entity table answers "where?" while a
 * spreadsheet answers the rest. A realistic team's month has tens (the demo's: about 50).
 */
export const FINDINGS_LISTED_IN_FULL = 200;

/** The kind part of the CSV holding every change without an approved review (its name: `<kind>_<period>.csv`). */
export const UNREVIEWED_CSV = "unreviewed-changes";

/** Whether the unreviewed changes are too many to list (then summarised per entity). */
export function unreviewedSummarised(found: ReviewFindings): boolean {
  return found.unreviewed > FINDINGS_LISTED_IN_FULL;
}

/** The review findings read before anything is written: the summary counts them first. */
export interface ReviewFindings {
  unreviewed: number;
  selfApprovals: ReviewPair[];
  rejected: TimelineRow[];
}

export async function readReviewFindings(ctx: ComplianceContext): Promise<ReviewFindings> {
  return {
    unreviewed: ctx.unreviewedFromCsv?.count ?? (await run(ctx, "unreviewedCount"))[0]?.records ?? 0,
    selfApprovals: await selfApprovalsOf(ctx),
    rejected: await run(ctx, "rejected"),
  };
}

export async function writeReviews(
  out: MarkdownOut,
  ctx: ComplianceContext,
  found: ReviewFindings,
): Promise<void> {
  heading(out, ctx, 2, "Reviews");
  out.line();
  heading(out, ctx, 3, HEADINGS.unreviewed);
  out.line();
  out.line(
    "An experiment state change or config edit counts as reviewed when an approval of its own kind " +
      "(experiment\\_review\\_accept for experiment state changes, config\\_review\\_accept for config edits) " +
      `for the same entity name comes before it, at most ${REVIEW_WINDOW_DAYS} days earlier, with no other ` +
      "change of that entity in between: one approval covers one change, the next one. Creations and the " +
      "review records themselves are exempt (and use up no approval).",
  );
  out.line();
  if (unreviewedSummarised(found)) {
    out.line(
      `${found.unreviewed} changes, more than ${FINDINGS_LISTED_IN_FULL}: summarised per entity (name) below. ` +
        `Every one of them is a row of this report's ${UNREVIEWED_CSV} CSV, which the manifest lists with its ` +
        "SHA-256; the first query below lists them.",
    );
    out.line();
    const table = { noun: "entity", ruleChanges: false };
    if (ctx.unreviewedFromCsv) ctx.unreviewedFromCsv.entities.write(out, ctx, table);
    else await writeEntityTable(out, ctx, "unreviewedSummary", table);
    querySection(out, ctx, "unreviewed", "unreviewedSummary");
  } else {
    await listUnreviewed(out, ctx, found);
    querySection(out, ctx, "unreviewed");
  }

  heading(out, ctx, 3, HEADINGS.selfApprovals);
  out.line();
  out.line(
    "An approval whose request was made by the same user id. An approval is paired with the request " +
      "of the same review flow and entity whose change log names the same review id; when the approval " +
      "names none, with the latest request of that flow and entity that is still open (not yet accepted, " +
      `rejected or deleted). Requests are looked for up to ${REVIEW_WINDOW_DAYS} days back; an approval ` +
      "whose request is not found accuses nobody.",
  );
  out.line();
  const note = selfApprovalControlsNote(ctx);
  if (note !== null) {
    out.line(note);
    out.line();
  }
  const self = found.selfApprovals;
  if (self.length === 0) out.line("None.");
  else {
    out.line(
      mdTable(
        ["Approved at", "Entity", "Approval", "Approved by", "User id", "Requested at", "Change log"],
        self.map(({ accept, request }) => [
          time(ctx, accept.occurred_at),
          mdText(accept.name),
          mdText(accept.action_type),
          mdText(accept.updated_by),
          mdText(accept.updated_by_user_id),
          time(ctx, request.occurred_at),
          mdText(accept.change_log),
        ]),
      ),
    );
  }
  querySection(out, ctx, "reviewRecords");

  heading(out, ctx, 3, HEADINGS.rejected);
  out.line();
  const { rejected } = found;
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
  querySection(out, ctx, "rejected");
}

/**
 * A no-self-approval control of the config counts more than this section (same pairing, same approvals):
 * also each change made by the person who approved the review before it. A reader sees both counts in
 * one document, so the note splits the control's count into the two.
 */
function selfApprovalControlsNote(ctx: ComplianceContext): string | null {
  const read = ctx.controls;
  if (!read) return null;
  // The control's approval findings are the approvals themselves; its change findings are never reviews.
  const approvals = new Set<string>(REVIEW_FLOWS.map((f) => f.accept));
  const each = read.controls
    .filter((c) => c.kind === "no-self-approval")
    .map((control) => {
      const mine = read.findings.filter((f) => f.control_id === control.id);
      const approved = mine.filter((f) => f.action_type !== null && approvals.has(f.action_type)).length;
      const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
      return (
        `the control ${mdText(control.id)} has ${count(mine.length, "finding")}: ` +
        `${count(approved, "approval")} by the requester (these, within its scope) and ` +
        `${count(mine.length - approved, "change")} made by the person who approved the review before ` +
        `(the entity's latest approval within ${REVIEW_WINDOW_DAYS} days)`
      );
    });
  if (each.length === 0) return null;
  return `The config's no-self-approval control counts more than this list: ${each.join("; ")}.`;
}

/** Every change without an approved review, one row each (they are few: see FINDINGS_LISTED_IN_FULL). */
async function listUnreviewed(
  out: MarkdownOut,
  ctx: ComplianceContext,
  found: ReviewFindings,
): Promise<void> {
  let unreviewed = 0;
  for await (const batch of batches(ctx, "unreviewed")) {
    for (const row of batch) {
      if (unreviewed === 0) {
        out.line(mdRow(["Time", "Entity", "Action type", "By"]));
        out.line(mdRow(["---", "---", "---", "---"]));
      }
      unreviewed += 1;
      out.line(
        mdRow([
          time(ctx, row.occurred_at),
          mdText(row.name),
          mdText(row.action_type),
          mdText(row.updated_by),
        ]),
      );
    }
  }
  if (unreviewed === 0) out.line("None.");
  // Same snapshot, same query: a difference would be a bug in the report, not in the store.
  if (unreviewed !== found.unreviewed)
    throw new FlagtrailError(
      `the unreviewed changes were counted ${found.unreviewed} times, listed ${unreviewed}`,
    );
}

/** The period's self-approvals (after the action-type filter), in time order. */
async function selfApprovalsOf(ctx: ComplianceContext): Promise<ReviewPair[]> {
  const types = ctx.actionTypes ? new Set(ctx.actionTypes) : null;
  const found: ReviewPair[] = [];
  const pair = approvalPairer();
  for await (const batch of batches(ctx, "reviewRecords")) {
    for (const record of batch) {
      const paired = pair(record);
      if (!paired || !isSelfApproval(paired)) continue;
      const { accept } = paired;
      if (accept.occurred_at < ctx.period.start || accept.occurred_at >= ctx.period.end) continue;
      if (types && !types.has(accept.action_type)) continue;
      found.push(paired);
    }
  }
  return found.sort((a, b) => a.accept.occurred_at - b.accept.occurred_at || a.accept.seq - b.accept.seq);
}
