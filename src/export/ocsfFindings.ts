// Each control finding, as `check` keeps it, as one OCSF Detection Finding (class 2004); the parts both
// event classes share are in ./ocsf.ts.
import { z } from "zod";
import type { Finding } from "../controls/finding.ts";
import { mappingOf } from "./activities.ts";
import { metadataSchema, OCSF_VERSION, PRODUCT, present, SEVERITY_IDS, SEVERITY_NAMES } from "./ocsf.ts";

const DETECTION_FINDING = { class_uid: 2004, category_uid: 2 } as const;

/** The stable id of a finding's event (finding ids hold a colon, record ids do not: never the same). */
export function findingEventId(project: string, findingId: string): string {
  return `${project}:finding:${findingId}`;
}

/** A Detection Finding event (2004) as flagtrail writes it. */
export const detectionFindingSchema = z.object({
  class_uid: z.literal(DETECTION_FINDING.class_uid),
  class_name: z.literal("Detection Finding"),
  category_uid: z.literal(DETECTION_FINDING.category_uid),
  category_name: z.literal("Findings"),
  activity_id: z.literal(1),
  activity_name: z.literal("Create"),
  type_uid: z.literal(200401),
  type_name: z.literal("Detection Finding: Create"),
  severity_id: z.number().int().min(2).max(4),
  severity: z.string(),
  status_id: z.union([z.literal(1), z.literal(3)]),
  status: z.string(),
  time: z.number().int(),
  message: z.string(),
  finding_info: z.object({
    uid: z.string(),
    title: z.string(),
    desc: z.string(),
    types: z.array(z.string()),
    first_seen_time: z.number().int(),
    analytic: z.object({ uid: z.string(), name: z.string(), type_id: z.literal(1), type: z.literal("Rule") }),
    related_events: z.array(z.object({ uid: z.string(), type: z.string().optional() })).optional(),
  }),
  resources: z.array(z.object({ name: z.string(), type: z.string().optional() })).optional(),
  metadata: metadataSchema,
  unmapped: z.object({ project: z.string(), event_id: z.string() }).loose(),
});
export type DetectionFindingEvent = z.infer<typeof detectionFindingSchema>;

/** One control finding as an OCSF Detection Finding (waived: status Suppressed). */
export function findingToOcsf(finding: Finding): DetectionFindingEvent {
  const severityId = SEVERITY_IDS[finding.severity];
  const firstSeen = Date.parse(finding.firstSeenAt);
  const entityType = finding.actionType === null ? undefined : mappingOf(finding.actionType)[1];
  return {
    class_uid: DETECTION_FINDING.class_uid,
    class_name: "Detection Finding",
    category_uid: DETECTION_FINDING.category_uid,
    category_name: "Findings",
    activity_id: 1,
    activity_name: "Create",
    type_uid: 200401,
    type_name: "Detection Finding: Create",
    severity_id: severityId,
    severity: SEVERITY_NAMES[severityId] ?? "Low",
    status_id: finding.waiver === null ? 1 : 3,
    status: finding.waiver === null ? "New" : "Suppressed",
    time: firstSeen,
    message: finding.message,
    finding_info: {
      uid: finding.id,
      title: `${finding.control}: ${finding.message}`,
      desc: finding.message,
      types: [finding.kind],
      first_seen_time: firstSeen,
      analytic: { uid: finding.control, name: finding.control, type_id: 1, type: "Rule" },
      ...(finding.recordId === null
        ? {}
        : { related_events: [{ uid: finding.recordId, type: "Entity Management" }] }),
    },
    ...(finding.entity === null
      ? {}
      : { resources: [present({ name: finding.entity, type: entityType }) as { name: string }] }),
    metadata: {
      version: OCSF_VERSION,
      product: { ...PRODUCT },
      uid: finding.id,
      tenant_uid: finding.project,
      ...present({ original_time: finding.occurredAt ?? undefined }),
      log_name: "control findings",
    },
    unmapped: {
      project: finding.project,
      event_id: findingEventId(finding.project, finding.id),
      control: finding.control,
      kind: finding.kind,
      ...present({
        record_id: finding.recordId,
        action_type: finding.actionType,
        actor: finding.actor,
        occurred_at: finding.occurredAt,
        waiver: finding.waiver,
      }),
    },
  };
}
