// Each stored audit record as one OCSF Entity Management event (class 3004): a pure function of what the
// store read (src/store/export/records.ts); the parts both event classes share are in ./ocsf.ts.
import { z } from "zod";
import type { Severity } from "../controls/config.ts";
import type {
  ApprovalRow,
  ExportRecordRow,
  RecordFindingRow,
  RuleChangeRow,
  VersionChangeRow,
} from "../store/export/records.ts";
import { ACTIVITY_NAMES, mappingOf } from "./activities.ts";
import { metadataSchema, OCSF_VERSION, PRODUCT, present, SEVERITY_IDS, SEVERITY_NAMES } from "./ocsf.ts";

const ENTITY_MANAGEMENT = { class_uid: 3004, category_uid: 3 } as const;

/** The stable id of a record's event: a SIEM drops the rare repeat after a crash by it. */
export function recordEventId(project: string, recordId: string): string {
  return `${project}:${recordId}`;
}

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

/** What the store holds about one record besides its row: its diffs, findings and last approval. */
export interface RecordDetails {
  ruleChanges: readonly RuleChangeRow[];
  versionChanges: readonly VersionChangeRow[];
  findings: readonly RecordFindingRow[];
  approval: ApprovalRow | undefined;
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
            // A first version (or one whose diff is empty) has no previous version to name: left out.
            data: {
              ...present({ previous_version: details.versionChanges[0]?.previous_version }),
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
