// One POST of a JSON body for the HTTP sinks: null when the receiver answered 2xx, else a short reason
// that names no URL (a Slack URL is a secret), no header and not the sink (the outbox row names it),
// and whether the failure is the sink's as a whole (./failure.ts).
import { FlagtrailError, SinkError } from "../../errors.ts";
import { failureCause, type SendFailure, statusIsSinkWide } from "./failure.ts";

const TIMEOUT_MS = 10_000;

export async function postJson(
  url: string,
  body: string,
  headers: () => Record<string, string> = () => ({}),
): Promise<SendFailure | null> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers() },
      body,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (response.ok) return null;
    return { reason: `HTTP ${response.status}`, sinkDown: statusIsSinkWide(response.status) };
  } catch (error) {
    // A secret not set, a timeout, a refused or reset connection, a name that does not resolve: no
    // alert of this sink gets through either.
    if (error instanceof SinkError) return { reason: error.reason, sinkDown: true };
    if (error instanceof FlagtrailError) return { reason: error.message, sinkDown: true };
    return { reason: failureCause(error, url), sinkDown: true };
  }
}
