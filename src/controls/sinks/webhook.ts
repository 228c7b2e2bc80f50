// The webhook sink: a POST of the alert's JSON, signed with HMAC-SHA256 over the timestamp and body,
// under the finding's event id as Idempotency-Key (a crash after the 2xx, before the mark, resends it
// under the same key). The secret is read here and goes nowhere but the signature.
import { createHmac } from "node:crypto";
import type { SinkOf } from "../config.ts";
import type { DueAlert } from "../deliver.ts";
import type { SendFailure } from "./failure.ts";
import { postJson } from "./http.ts";
import { sinkSecret } from "./secret.ts";

/** `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>` */
function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

export function sendWebhook(sink: SinkOf<"webhook">, row: DueAlert): Promise<SendFailure | null> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return postJson(sink.url, row.payload, () => ({
    "Flagtrail-Timestamp": timestamp,
    "Flagtrail-Signature": signature(
      sinkSecret(sink.name, { env: sink.secretEnv, file: sink.secretFile }),
      timestamp,
      row.payload,
    ),
    "Idempotency-Key": row.key,
  }));
}
