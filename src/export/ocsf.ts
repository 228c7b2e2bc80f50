// The OCSF mapping (docs/export.md): each stored audit record becomes one OCSF 1.3.0 Entity Management
// event (class 3004), each control finding one Detection Finding (class 2004). Pure functions of what the
// store read (src/store/export/records.ts) and of a finding as `check` keeps it; no SQL here. The event
// shapes are zod schemas so that tests check a whole event against them; the types come from them.
import { z } from "zod";
import { SEVERITIES, type Severity } from "../controls/config.ts";
import type {
  ApprovalRow,
  ExportRecordRow,
  RecordFindingRow,
  RuleChangeRow,
  VersionChangeRow,
} from "../store/export/records.ts";
import { VERSION } from "../version.ts";
import { ACTIVITY_NAMES, mappingOf } from "./activities.ts";

export const OCSF_VERSION = "1.3.0";
/** metadata.product: flagtrail delivers the events; the platform whose console wrote the audit log is the vendor. */
export const PRODUCT = { name: "flagtrail", vendor_name: "Statsig", version: VERSION } as const;
const ENTITY_MANAGEMENT = { class_uid: 3004, category_uid: 3 } as const;
const DETECTION_FINDING = { class_uid: 2004, category_uid: 2 } as const;

/** A control severity as OCSF's severity_id: low 2, medium 3, high 4 (1 Informational: no finding). */
const SEVERITY_IDS: Readonly<Record<Severity, number>> = { low: 2, medium: 3, high: 4 };
const SEVERITY_NAMES: Readonly<Record<number, string>> = {
  1: "Informational",
  2: "Low",
  3: "Medium",
  4: "High",
};

/** The stable id of a record's event: a SIEM drops the rare repeat after a crash by it. */
export function recordEventId(project: string, recordId: string): string {
  return `${project}:${recordId}`;
}

/** The stable id of a finding's event (finding ids hold a colon, record ids do not: never the same). */
export function findingEventId(project: string, findingId: string): string {
  return `${project}:finding:${findingId}`;
}

const productSchema = z.object({
  name: z.literal(PRODUCT.name),
  vendor_name: z.string(),
  version: z.string(),
});
const metadataSchema = z.object({
  version: z.literal(OCSF_VERSION),
  product: productSchema,
  uid: z.string().min(1),
  tenant_uid: z.string().min(1),
  original_time: z.string().optional(),
  logged_time: z.number().int().optional(),
  sequence: z.number().int().optional(),
  event_code: z.string().optional(),
  log_name: z.string(),
});
const userSchema = z.object({
  name: z.string().optional(),
  uid: z.string().optional(),
  email_addr: z.string().optional(),
});
const managedEntitySchema = z.object({
  name: z.string(),
  type: z.string(),
  uid: z.string().optional(),
  version: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
const enrichmentSchema = z.object({
  name: z.string(),
  value: z.string(),
  type: z.string(),
  provider: z.string(),
  data: z.record(z.string(), z.unknown()),
});

/** An Entity Management event (3004) as flagtrail writes it. */
export const entityManagementSchema = z.object({
  class_uid: z.literal(ENTITY_MANAGEMENT.class_uid),
  class_name: z.literal("Entity Management"),
  category_uid: z.literal(ENTITY_MANAGEMENT.category_uid),
  category_name: z.literal("Identity & Access Management"),
  activity_id: z.number().int(),
  activity_name: z.string(),
  type_uid: z.number().int(),
  type_name: z.string(),
  severity_id: z.number().int().min(1).max(4),
  severity: z.string(),
  status_id: z.literal(1),
  status: z.literal("Success"),
  time: z.number().int(),
  message: z.string(),
  comment: z.string().optional(),
  actor: z.object({ user: userSchema }),
  entity: managedEntitySchema,
  entity_result: managedEntitySchema.optional(),
  enrichments: z.array(enrichmentSchema).optional(),
  metadata: metadataSchema,
  unmapped: z.object({ project: z.string(), event_id: z.string() }).loose(),
});
export type EntityManagementEvent = z.infer<typeof entityManagementSchema>;

/** A finding as `check --format json` prints it and the outbox holds it (src/controls/check.ts Finding). */
const findingInputSchema = z.object({
  id: z.string().min(1),
  control: z.string(),
  kind: z.string(),
  severity: z.enum(SEVERITIES),
  project: z.string(),
  recordId: z.string().nullable(),
  entity: z.string().nullable(),
  actionType: z.string().nullable(),
  occurredAt: z.string().nullable(),
  actor: z.string().nullable(),
  message: z.string(),
  firstSeenAt: z.string(),
  waiver: z
    .object({ by: z.string(), reason: z.string(), at: z.string(), expires: z.string().nullable() })
    .nullable(),
});
export type FindingInput = z.infer<typeof findingInputSchema>;

/** An outbox row's payload: `{"event":"finding","finding":{…}}`. */
export const outboxFindingSchema = z.object({ event: z.literal("finding"), finding: findingInputSchema });

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

/** What the store holds about one record besides its row: its diffs, findings and last approval. */
export interface RecordDetails {
  ruleChanges: readonly RuleChangeRow[];
  versionChanges: readonly VersionChangeRow[];
  findings: readonly RecordFindingRow[];
  approval: ApprovalRow | undefined;
}

/** Leaves out what is null or undefined: OCSF wants an attribute absent rather than null. */
function present<T extends Record<string, unknown>>(object: T): { [K in keyof T]?: NonNullable<T[K]> } {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== null && v !== undefined)) as {
    [K in keyof T]?: NonNullable<T[K]>;
  };
}

/** modifierEmail is a string as sent, or the JSON text of an object: only a plain string is an address. */
function emailOf(modifierEmail: string | null): string | undefined {
  if (modifierEmail === null || modifierEmail.startsWith("{")) return undefined;
  return modifierEmail;
}

function metadataOf(project: string, record: ExportRecordRow) {
  return {
    version: OCSF_VERSION,
    product: { ...PRODUCT },
    uid: record.id,
    tenant_uid: project,
    original_time: `${record.date_text} ${record.time_text}`,
    logged_time: Number(record.first_seen_at),
    sequence: record.seq,
    event_code: record.action_type,
    log_name: "console audit log",
  } as const;
}

/** The entity the record names: config edits of a known version carry the config's id and version. */
function entityOf(record: ExportRecordRow, type: string) {
  return present({
    name: record.name,
    type: record.config_id !== null && type === "config" ? "dynamic_config" : type,
    uid: record.config_id ?? record.experiment_id ?? undefined,
    version: record.config_version === null ? undefined : String(record.config_version),
  }) as z.infer<typeof managedEntitySchema>;
}

function enrichmentsOf(details: RecordDetails) {
  const enrichments: z.infer<typeof enrichmentSchema>[] = [];
  const approval = details.approval;
  if (approval) {
    enrichments.push({
      name: "review.last_approval",
      value: approval.id,
      type: "review",
      provider: PRODUCT.name,
      data: present({
        action_type: approval.action_type,
        approved_by: approval.updated_by,
        approved_by_uid: approval.updated_by_user_id,
        time: approval.occurred_at,
        comment: approval.change_log,
      }),
    });
  }
  for (const f of details.findings) {
    enrichments.push({
      name: "control.finding",
      value: f.id,
      type: "finding",
      provider: PRODUCT.name,
      data: { control: f.control_id, kind: f.kind, severity: f.severity, message: f.message },
    });
  }
  return enrichments;
}

function severityIdOf(findings: readonly RecordFindingRow[]): number {
  let id = 1;
  for (const f of findings) id = Math.max(id, SEVERITY_IDS[f.severity as Severity] ?? 1);
  return id;
}

/** The before/after flagtrail knows: the record's rule diff and the diff of the config version it made. */
function diffsOf(details: RecordDetails, summary: string | null) {
  return present({
    rule_diff:
      details.ruleChanges.length === 0 && summary === null
        ? undefined
        : {
            summary,
            changes: details.ruleChanges.map((c) =>
              present({
                rule_id: c.rule_id,
                rule_name: c.rule_name,
                change: c.change,
                field: c.field,
                old_value: c.old_value,
                new_value: c.new_value,
              }),
            ),
          },
  });
}

/** One audit record as an OCSF Entity Management event. */
export function recordToOcsf(
  project: string,
  record: ExportRecordRow,
  details: RecordDetails,
): EntityManagementEvent {
  const [activityId, entityType] = mappingOf(record.action_type);
  const activityName = ACTIVITY_NAMES[activityId];
  const severityId = severityIdOf(details.findings);
  const entity = entityOf(record, entityType);
  const enrichments = enrichmentsOf(details);
  const actor = present({
    name: record.updated_by,
    uid: record.updated_by_user_id,
    email_addr: emailOf(record.modifier_email),
  });
  const versionChanges = details.versionChanges.map((c) =>
    present({
      field: c.field,
      path: c.path,
      change: c.change,
      old_value: c.old_value,
      new_value: c.new_value,
    }),
  );
  return {
    class_uid: ENTITY_MANAGEMENT.class_uid,
    class_name: "Entity Management",
    category_uid: ENTITY_MANAGEMENT.category_uid,
    category_name: "Identity & Access Management",
    activity_id: activityId,
    activity_name: activityName,
    type_uid: ENTITY_MANAGEMENT.class_uid * 100 + activityId,
    type_name: `Entity Management: ${activityName}`,
    severity_id: severityId,
    severity: SEVERITY_NAMES[severityId] ?? "Informational",
    status_id: 1,
    status: "Success",
    // A record whose date and time texts could not be parsed has no occurred_at: it was stored at first_seen_at.
    time: Number(record.occurred_at ?? record.first_seen_at),
    message: `${record.updated_by ?? "unknown"}: ${record.action_type} ${record.name}`,
    ...present({ comment: record.change_log }),
    actor: { user: actor },
    entity,
    ...(record.config_version === null
      ? {}
      : {
          entity_result: {
            ...entity,
            data: {
              previous_version: details.versionChanges[0]?.previous_version ?? null,
              changes: versionChanges,
            },
          },
        }),
    ...(enrichments.length === 0 ? {} : { enrichments }),
    metadata: metadataOf(project, record),
    unmapped: {
      project,
      event_id: recordEventId(project, record.id),
      action_type: record.action_type,
      ...present({
        category: record.category,
        modifier_email:
          record.modifier_email !== null && emailOf(record.modifier_email) === undefined
            ? record.modifier_email
            : undefined,
        time_unparsed: record.occurred_at === null ? true : undefined,
      }),
      ...diffsOf(details, record.rule_diff_summary),
    },
  };
}

/** One control finding as an OCSF Detection Finding (waived: status Suppressed). */
export function findingToOcsf(finding: FindingInput): DetectionFindingEvent {
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
