// The one sentence for a user's query (`flagtrail sql`) stopped by its time limit, on either engine.
import { FlagtrailError } from "../errors.ts";

/** A query's time limit ran out: a run-time failure (exit 1), not bad input. */
export class QueryTimeoutError extends FlagtrailError {}

export function queryTimedOut(limitMs: number): QueryTimeoutError {
  return new QueryTimeoutError(
    `The query was stopped after ${limitMs / 1000} s of work, its time limit; nothing was changed.`,
  );
}
