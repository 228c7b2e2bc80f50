// Delivers the outbox: each due alert POSTed to its sink, signed; marked delivered only on a 2xx, else
// tried again on a later run after a delay that doubles per attempt (at most an hour). The receiver
// may see an alert twice (a crash after its 2xx, before the mark), always with the same
// Idempotency-Key. Secrets are read here and go nowhere but the signature.
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { FlagtrailError } from "../errors.ts";
import { dueAlerts, markDelivered, markFailed, type OutboxRow } from "../store/controls/outbox.ts";
import type { AnyStore } from "../store/openAny.ts";
import { type AlertSink, isSiemSink, type Sink } from "./config.ts";

const MAX_BACKOFF_MS = 3_600_000;
const TIMEOUT_MS = 10_000;

function secretOf(sink: AlertSink): string {
  if (sink.secretEnv !== undefined) {
    const secret = process.env[sink.secretEnv];
    if (!secret)
      throw new FlagtrailError(`sink ${sink.name}: the environment variable ${sink.secretEnv} is not set`);
    return secret;
  }
  try {
    const secret = readFileSync(sink.secretFile ?? "", "utf8").trim();
    if (secret) return secret;
  } catch {
    // Said below without the error's text, which could quote the file.
  }
  throw new FlagtrailError(`sink ${sink.name}: cannot read a secret from its secretFile`);
}

/** `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>` */
function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

async function post(sink: AlertSink, row: OutboxRow): Promise<string | null> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  try {
    const response = await fetch(sink.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "Flagtrail-Timestamp": timestamp,
        "Flagtrail-Signature": signature(secretOf(sink), timestamp, row.payload),
        "Idempotency-Key": row.finding_id,
      },
      body: row.payload,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.ok ? null : `HTTP ${response.status}`;
  } catch (error) {
    if (error instanceof FlagtrailError) return error.message;
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return cause ?? (error instanceof Error ? error.name : "request failed");
  }
}

interface DeliveryCount {
  delivered: number;
  failed: number;
}

/** Delivers every due alert of the store to its sink (alerts of sinks no longer configured wait). */
export async function deliverAlerts(
  store: AnyStore,
  sinks: readonly Sink[],
  now: number,
): Promise<DeliveryCount> {
  // The SIEM sinks' rows are delivered with their records (src/export/sinks/deliver.ts).
  const byName = new Map(sinks.filter((s): s is AlertSink => !isSiemSink(s)).map((s) => [s.name, s]));
  const count: DeliveryCount = { delivered: 0, failed: 0 };
  for (const row of await dueAlerts(store, now)) {
    const sink = byName.get(row.sink);
    if (!sink) continue;
    const error = await post(sink, row);
    if (error === null) {
      await markDelivered(store, row, Date.now());
      count.delivered += 1;
    } else {
      const delay = Math.min(MAX_BACKOFF_MS, sink.backoffSeconds * 1000 * 2 ** row.attempts);
      await markFailed(store, row, Date.now() + delay, error);
      count.failed += 1;
    }
  }
  return count;
}
