// One POST of a JSON body for the HTTP sinks: null when the receiver answered 2xx, else a short reason
// that names no URL (a Slack URL is a secret), no header and not the sink (the outbox row names it).
import { FlagtrailError, SinkError } from "../../errors.ts";

const TIMEOUT_MS = 10_000;

export async function postJson(
  url: string,
  body: string,
  headers: () => Record<string, string> = () => ({}),
): Promise<string | null> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers() },
      body,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.ok ? null : `HTTP ${response.status}`;
  } catch (error) {
    if (error instanceof SinkError) return error.reason;
    if (error instanceof FlagtrailError) return error.message;
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return cause ?? (error instanceof Error ? error.name : "request failed");
  }
}
