// What every SIEM transport does: take one batch of events and say whether the receiver acknowledged
// it. A failure is typed: retryable (network, 5xx, back-pressure: tried again with backoff, and on the
// next run) or not (a refused token: one sentence naming the sink, never the secret).
import { setTimeout as delay } from "node:timers/promises";
import { failureCause } from "../../controls/sinks/failure.ts";
import { SinkError } from "../../errors.ts";

/** One event: its stable id (project + record or finding id) and its JSON text; a record's seq. */
export interface SinkEvent {
  id: string;
  line: string;
  seq?: number;
}

export interface Transport {
  /** Resolves once the receiver has acknowledged every event of the batch; throws a SinkError. */
  send(events: readonly SinkEvent[]): Promise<void>;
}

/**
 * A failed request's HTTP status as a SinkError: 401/403 a refused secret, 5xx/408/429 retryable; 400, 413
 * and 422 a refusal of these events unless `ofTheSink` says the receiver refused its settings (an index).
 */
export function httpFailure(name: string, status: number, detail: string, ofTheSink = false): SinkError {
  const what = detail ? `HTTP ${status}, ${detail}` : `HTTP ${status}`;
  if (status === 401 || status === 403)
    return new SinkError(name, `refused its credentials (${what})`, false);
  const retryable = status >= 500 || status === 408 || status === 429;
  const refused = !ofTheSink && (status === 400 || status === 413 || status === 422);
  return new SinkError(name, `did not take the events (${what})`, retryable, "verb", status === 413, refused);
}

/** A network error (refused, reset, timed out) as a retryable SinkError. */
export function networkFailure(name: string, error: unknown, url?: string): SinkError {
  if (error instanceof SinkError) return error;
  return new SinkError(name, `could not be reached (${failureCause(error, url)})`, true);
}

/**
 * Sends a batch, trying a retryable failure again `retries` times, `backoffMs` doubling each time. A batch
 * the receiver refuses as too large (HTTP 413: Splunk HEC's 1 MB, a proxy's limit) goes in halves, in
 * order, down to one event; only an event too large alone still fails. `acked` is told each part the
 * receiver took, in order, before the next is sent: what went before a failure is not sent again.
 */
export async function sendWithRetry(
  transport: Transport,
  events: readonly SinkEvent[],
  policy: { retries: number; backoffMs: number },
  acked: (events: readonly SinkEvent[]) => Promise<void> = async () => {},
): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await transport.send(events);
    } catch (error) {
      if (error instanceof SinkError && error.tooLarge && events.length > 1) {
        const half = Math.ceil(events.length / 2);
        await sendWithRetry(transport, events.slice(0, half), policy, acked);
        await sendWithRetry(transport, events.slice(half), policy, acked);
        return;
      }
      if (!(error instanceof SinkError) || !error.retryable || attempt >= policy.retries) throw error;
      await delay(Math.min(60_000, policy.backoffMs * 2 ** attempt));
      continue;
    }
    await acked(events);
    return;
  }
}

/** OCSF's severity_id of an event (1 informational … 6 fatal), when it has one. */
export function severityIdOf(event: unknown): number | undefined {
  const id = (event as { severity_id?: unknown } | null)?.severity_id;
  return typeof id === "number" ? id : undefined;
}

/** The event's own time (OCSF `time`, epoch ms), when it has one. */
export function timeOf(event: unknown): number | undefined {
  const time = (event as { time?: unknown } | null)?.time;
  return typeof time === "number" && Number.isFinite(time) ? time : undefined;
}
