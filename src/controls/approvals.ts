// The approvals that cover a change: the review pairs of its entity (the report's pairing), looked up by
// flow and entity name, before the change (the review window) or after it (an emergency's post-review).
import type { ReviewPair } from "../report/reviewPairing.ts";
import { APPROVING_FLOW, REVIEW_WINDOW_MS } from "../report/reviews.ts";

/** What the lookups read of a change. */
type Change = { category: string; name: string; occurred_at: number };

/**
 * The approvals of each flow and entity name, in the order of `pairs` (the lookups below keep its order,
 * so they answer exactly as a scan of every pair would). Built once per inputs: a scan per change was
 * quadratic on a large month (issue 23). Per flow as the report pairs them: an experiment's review does
 * not cover a config of the same name.
 */
const approvalsByEntity = new WeakMap<readonly ReviewPair[], Map<string, ReviewPair[]>>();

const entityKey = (flow: string, name: string) => `${flow}\u0000${name}`;

function approvalsOf(pairs: readonly ReviewPair[], change: Change): readonly ReviewPair[] {
  let index = approvalsByEntity.get(pairs);
  if (!index) {
    index = new Map();
    for (const p of pairs) {
      const key = entityKey(p.accept.entity, p.accept.name);
      const list = index.get(key);
      if (list) list.push(p);
      else index.set(key, [p]);
    }
    approvalsByEntity.set(pairs, index);
  }
  const flow = APPROVING_FLOW[change.category];
  return flow === undefined ? [] : (index.get(entityKey(flow, change.name)) ?? []);
}

/** The approval of the change's entity that follows it within `ms`, if any. */
export function approvalAfter(pairs: readonly ReviewPair[], change: Change, ms: number): ReviewPair | null {
  const at = change.occurred_at;
  return (
    approvalsOf(pairs, change).find((p) => p.accept.occurred_at > at && p.accept.occurred_at <= at + ms) ??
    null
  );
}

/** The latest approval of the change's entity at or before it, within the review window. */
export function approvalBefore(pairs: readonly ReviewPair[], change: Change): ReviewPair | null {
  const at = change.occurred_at;
  let found: ReviewPair | null = null;
  for (const p of approvalsOf(pairs, change)) {
    const t = p.accept.occurred_at;
    if (t <= at && t >= at - REVIEW_WINDOW_MS) found = p;
  }
  return found;
}
