// Pairs each review approval with the request it approves, so "approved by its own author" names the
// right person. Several reviews can be open on one entity at once; the latest request before an
// approval is often someone else's. Rule (docs/reports.md "What the compliance Markdown contains"):
// 1. When the approval's change log names a review id ("Accepted review qSzyrzfG requested by …"), it
//    approves the open request of the same flow and entity whose change log names the same id. No such
//    request in the window: the requester is unknown and nobody is accused.
// 2. Without an id, it approves the latest request of the same flow and entity that is still open, i.e.
//    not already accepted, rejected or deleted.
// Records arrive sorted by flow, entity name, time (requests first within a second) and seq, so the
// walk is linear and holds only the open requests of one entity.
import type { ReviewRecord } from "../store/reportQueries.ts";

/** `review <id>` where the id looks like one (has a digit or capital), not a word like "review requested". */
const REVIEW_ID = /\breview ([A-Za-z0-9_-]{4,64})\b/g;

export function reviewIdOf(changeLog: string | null): string | null {
  if (!changeLog) return null;
  for (const match of changeLog.matchAll(REVIEW_ID)) {
    const token = match[1]!;
    if (/[0-9A-Z]/.test(token)) return token;
  }
  return null;
}
export type { ReviewRecord } from "../store/reportQueries.ts";

export interface ReviewPair {
  accept: ReviewRecord;
  request: ReviewRecord;
}

/**
 * A pairing walk as a function: feed it records in the order above, one call each; it returns the pair
 * an approval closes, else null. (The report feeds it row batches as the store streams them.)
 */
export function approvalPairer(): (record: ReviewRecord) => ReviewPair | null {
  let key: string | null = null;
  let open: { record: ReviewRecord; reviewId: string | null }[] = [];
  return (record) => {
    const recordKey = `${record.entity}\u0000${record.name}`;
    if (recordKey !== key) {
      key = recordKey;
      open = [];
    }
    const reviewId = reviewIdOf(record.change_log);
    if (record.role === "request") {
      open.push({ record, reviewId });
      return null;
    }
    // Closing (accept, reject, delete): find the request it closes, latest first.
    let index = -1;
    for (let i = open.length - 1; i >= 0; i -= 1) {
      if (reviewId === null || open[i]!.reviewId === reviewId) {
        index = i;
        break;
      }
    }
    if (index < 0) return null;
    const request = open[index]!.record;
    open.splice(index, 1);
    return record.role === "accept" ? { accept: record, request } : null;
  };
}

/** Every approval that could be paired with its request, in input order. */
export function* pairApprovals(records: Iterable<ReviewRecord>): Generator<ReviewPair> {
  const pair = approvalPairer();
  for (const record of records) {
    const paired = pair(record);
    if (paired) yield paired;
  }
}

/** An approval whose request was made by the same user id (both known). */
export function isSelfApproval(pair: ReviewPair): boolean {
  const approver = pair.accept.updated_by_user_id;
  return approver !== null && approver !== "" && approver === pair.request.updated_by_user_id;
}
