// The Slack sink: one short message per finding to an incoming webhook, whose URL (a secret: anyone
// holding it can post to the channel) comes from the environment variable the config names.
import { z } from "zod";
import type { OutboxRow } from "../../store/controls/outbox.ts";
import type { SinkOf } from "../config.ts";
import { findingSchema } from "../finding.ts";
import { type SendFailure, unreadableRow } from "./failure.ts";
import { postJson } from "./http.ts";

/** What a Slack message shows of a finding (the rest of it, such as its record id, stays in the outbox). */
const alertFindingSchema = findingSchema
  .pick({
    id: true,
    control: true,
    kind: true,
    severity: true,
    project: true,
    entity: true,
    actionType: true,
    occurredAt: true,
    actor: true,
    message: true,
  })
  .extend({ waiver: findingSchema.shape.waiver.optional() });
type AlertFinding = z.infer<typeof alertFindingSchema>;
const alertBodySchema = z.object({ finding: alertFindingSchema });

/** Slack reads `&`, `<` and `>` as markup (links, mentions): a name holding them is shown as written. */
function slackText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** `[high] cc81-review (review-required), project default: <message>`, what, who, when on a second line, the waiver if any. */
export function slackMessage(f: AlertFinding): string {
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
  // The outbox held it as check wrote it (unreadable rows are set aside before): a mismatch fails it alone.
  const body = alertBodySchema.safeParse(JSON.parse(row.payload));
  if (!body.success)
    return Promise.resolve({
      reason: unreadableRow(row, "its finding is not one flagtrail wrote"),
      sinkDown: false,
    });
  return postJson(url, JSON.stringify({ text: slackMessage(body.data.finding) }));
}
