// Which positions of the audit log's list a read's pages covered, when the list grew while it was read:
// span arithmetic apart from the pager that collects the spans (./pager.ts).

/** The positions [from, to) of the list as it was when the read's first page was answered. */
export interface Span {
  from: number;
  to: number;
}

/**
 * Positions of the original list not covered by any page read: page p answered when the list had
 * grown by `shift` records covers original positions [(p-1)n - shift, pn - shift).
 */
export function uncoveredFrom(covered: readonly Span[], from: number, to: number): number | null {
  const spans = [...covered].sort((a, b) => a.from - b.from);
  let reached = from;
  for (const span of spans) {
    if (span.from > reached) return reached;
    reached = Math.max(reached, span.to);
    if (reached >= to) return null;
  }
  return reached < to ? reached : null;
}
