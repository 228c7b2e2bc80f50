// The webhook sink: a POST of the alert's JSON, signed with HMAC-SHA256 over the timestamp and body,
// under the finding id as Idempotency-Key (a crash after the 2xx, before the mark, resends it under
// the same key). The secret is read here and goes nowhere but the signature.
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { SinkError } from "../../errors.ts";
import type { OutboxRow } from "../../store/controls/outbox.ts";
import type { SinkOf } from "../config.ts";
import type { SendFailure } from "./failure.ts";
import { postJson } from "./http.ts";

function secretOf(sink: SinkOf<"webhook">): string {
  if (sink.secretEnv !== undefined) {
    const secret = process.env[sink.secretEnv];
    if (!secret)
      throw new SinkError(
        sink.name,
        `the environment variable ${sink.secretEnv} is not set`,
        false,
        "clause",
      );
    return secret;
  }
  try {
    const secret = readFileSync(sink.secretFile ?? "", "utf8").trim();
    if (secret) return secret;
  } catch {
    // Said below without the error's text, which could quote the file.
  }
  throw new SinkError(sink.name, "cannot read a secret from its secretFile", false, "clause");
}

/** `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>` */
function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

export function sendWebhook(sink: SinkOf<"webhook">, row: OutboxRow): Promise<SendFailure | null> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return postJson(sink.url, row.payload, () => ({
    "Flagtrail-Timestamp": timestamp,
    "Flagtrail-Signature": signature(secretOf(sink), timestamp, row.payload),
    "Idempotency-Key": row.finding_id,
  }));
}
