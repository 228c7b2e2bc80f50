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

/** A cause's message used as it is: a few plain words (fetch's "bad port"), no address, number or path. */
const PLAIN_WORDS = /^[A-Za-z][A-Za-z ]{0,59}$/;

/** Whether `text` holds a piece of `url` (its host, user, password, path or query): they may be secrets. */
function quotesUrl(text: string, url: string | undefined): boolean {
  if (url === undefined) return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return true;
  }
  const { hostname, username, password, pathname, search } = parsed;
  const parts = [hostname, username, password, ...pathname.split("/"), ...search.slice(1).split(/[&=]/)];
  return parts.some((part) => part.length >= 4 && text.includes(part));
}

/**
 * Why a request never got an answer, in a few words and never a secret: the cause's code (ECONNREFUSED),
 * else its message when plain words that quote nothing of the URL (fetch refuses ports 1, 25, 6000… with
 * a TypeError whose cause says "bad port"), else the error's name. fetch's own message is never used: it
 * can quote the URL ("Failed to parse URL from …"), and a Slack URL is a secret.
 */
export function failureCause(error: unknown, url?: string): string {
  const cause = (error as { cause?: unknown }).cause;
  const code = (cause as { code?: unknown } | undefined)?.code ?? (error as { code?: unknown }).code;
  if (typeof code === "string") return code;
  const message = cause instanceof Error ? cause.message : undefined;
  if (message !== undefined && PLAIN_WORDS.test(message) && !quotesUrl(message, url)) return message;
  return error instanceof Error ? error.name : "request failed";
}
