// A finding as flagtrail hands it out: `check --format json` prints it, the outbox keeps it for the alert
// sinks (Slack, webhook, exec) and the SIEM sinks, and export maps it to OCSF. One schema: the outbox
// rows are read back through it, so a payload flagtrail did not write is told apart.
import { z } from "zod";
import { CONTROL_KINDS, SEVERITIES } from "./config.ts";

/** A waiver in force, as shown beside its finding. */
const waiverViewSchema = z.object({
  by: z.string(),
  reason: z.string(),
  /** When it was given, ISO 8601 as check's other times (`…T03:04:05.000+00:00`). */
  at: z.string(),
  /** Last day it holds (YYYY-MM-DD, UTC), or null: until withdrawn. */
  expires: z.string().nullable(),
});
export type WaiverView = z.infer<typeof waiverViewSchema>;

export const findingSchema = z.object({
  id: z.string().min(1),
  control: z.string(),
  kind: z.enum(CONTROL_KINDS),
  severity: z.enum(SEVERITIES),
  project: z.string(),
  recordId: z.string().nullable(),
  entity: z.string().nullable(),
  actionType: z.string().nullable(),
  /** ISO 8601 with offset, or null for a finding about the evidence. */
  occurredAt: z.string().nullable(),
  actor: z.string().nullable(),
  message: z.string(),
  firstSeenAt: z.string(),
  waiver: waiverViewSchema.nullable(),
});
export type Finding = z.infer<typeof findingSchema>;

/** An outbox row's payload: `{"event":"finding","finding":{…}}`. */
export const outboxFindingSchema = z.object({ event: z.literal("finding"), finding: findingSchema });
