// What a sink's failed delivery says: the reason kept in the outbox row, and whether it is about the
// sink itself (down, unreachable, overloaded, refusing its credentials: every alert would fail the same
// way) or about this one alert (a receiver rejecting this payload), after which the others still go.

export interface SendFailure {
  /** A short status for last_error (`HTTP 503`, `ECONNREFUSED`, `exit 3`), never a secret. */
  reason: string;
  /** True when the next alert to the same sink would fail the same way: stop sending to it this run. */
  sinkDown: boolean;
}

/** Whether an HTTP status refuses the receiver as a whole: 5xx, 408, 429, and 401/403 (its credentials). */
export const statusIsSinkWide = (status: number): boolean =>
  status >= 500 || status === 408 || status === 429 || status === 401 || status === 403;

/** Why an outbox row cannot be read, as its last_error (the finding id, never the payload). */
export const unreadableRow = (row: { finding_id: string }, why: string): string =>
  `the outbox row of finding ${row.finding_id} cannot be read (${why})`;
