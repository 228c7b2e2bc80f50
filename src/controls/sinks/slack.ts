// The Slack sink: one short message per finding to an incoming webhook, whose URL (a secret: anyone
// holding it can post to the channel) comes from the environment variable the config names.
import type { OutboxRow } from "../../store/controls/outbox.ts";
import type { SinkOf } from "../config.ts";
import type { SendFailure } from "./failure.ts";
import { postJson } from "./http.ts";

interface AlertFinding {
  id: string;
  control: string;
  kind: string;
  severity: string;
  project: string;
  entity: string | null;
  actionType: string | null;
  occurredAt: string | null;
  actor: string | null;
  message: string;
  waiver?: { by: string; reason: string } | null;
}

/** Slack reads `&`, `<` and `>` as markup (links, mentions): a name holding them is shown as written. */
function slackText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** `[high] cc81-review (review-required), project default: <message>`, what, who, when on a second line, the waiver if any. */
export function slackMessage(payload: string): string {
  const { finding: f } = JSON.parse(payload) as { finding: AlertFinding };
  const head = `[${f.severity}] ${f.control} (${f.kind}), project ${f.project}: ${f.message}`;
  const what = [
    f.actionType && f.entity ? `${f.actionType} of ${f.entity}` : (f.entity ?? f.actionType),
    f.actor ? `by ${f.actor}` : null,
    f.occurredAt ? `at ${f.occurredAt}` : null,
  ].filter((x) => x !== null);
  // Waived after it was found, before this delivery: the channel sees it accepted, not open.
  const waived = f.waiver ? [`waived by ${f.waiver.by}: ${f.waiver.reason}`] : [];
  const lines = [head, ...(what.length > 0 ? [what.join(" ")] : []), ...waived, `finding ${f.id}`];
  return slackText(lines.join("\n"));
}

export function sendSlack(sink: SinkOf<"slack">, row: OutboxRow): Promise<SendFailure | null> {
  const url = process.env[sink.urlEnv];
  // The outbox row names its sink: the reason alone.
  if (!url)
    return Promise.resolve({ reason: `the environment variable ${sink.urlEnv} is not set`, sinkDown: true });
  return postJson(url, JSON.stringify({ text: slackMessage(row.payload) }));
}
