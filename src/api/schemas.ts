// zod schemas for what the console API sends back. They are deliberately tolerant where the real
// service is loose (see ../shared/api/README.md) and keep unknown fields (looseObject), because an
// audit trail must store what was received, not what we expected.
import { z } from "zod";

export const paginationSchema = z.looseObject({
  itemsPerPage: z.number().int().nonnegative(),
  pageNumber: z.number().int().nonnegative(),
  totalItems: z.number().int().nonnegative(),
  nextPage: z.string().nullish(),
  previousPage: z.string().nullish(),
  all: z.string().nullish(),
});
export type Pagination = z.infer<typeof paginationSchema>;

/** A list response before its items are looked at: items are validated one by one by the sync. */
export const listEnvelopeSchema = z.looseObject({
  // Nothing reads it: a 200 without a message must not fail a sync.
  message: z.string().optional(),
  data: z.array(z.unknown()),
  pagination: paginationSchema,
});

export const errorBodySchema = z.looseObject({
  status: z.number().int().optional(),
  message: z.string(),
  errors: z.array(z.unknown()).optional(),
});

/** One condition of an audit rule (`conditionType` and `operator` are undocumented integers). */
const auditConditionSchema = z.looseObject({
  conditionType: z.number().int().optional(),
  operator: z.number().int().optional(),
  value: z.array(z.unknown()).optional(),
  extraConfig: z.record(z.string(), z.unknown()).optional(),
});
export type AuditCondition = z.infer<typeof auditConditionSchema>;

/** A targeting rule as the audit log shows it in `changes.rules.old/new`. */
export const auditRuleSchema = z.looseObject({
  id: z.string(),
  groupName: z.string().optional(),
  percentagePass: z.number().optional(),
  conditionJSON: z.array(auditConditionSchema).optional(),
  returnValueJSON: z.string().optional(),
  salt: z.string().optional(),
  environment: z.string().nullish(),
  rollouts: z.array(z.unknown()).optional(),
  enabledEnvironments: z.array(z.string()).nullish(),
});
export type AuditRule = z.infer<typeof auditRuleSchema>;

export const ruleChangesSchema = z.looseObject({
  old: z.array(auditRuleSchema).default([]),
  new: z.array(auditRuleSchema).default([]),
});

/**
 * One audit log record. Required fields are the ones without which the record cannot be placed
 * (id) or read (name, actionType, date, time); the rest may be missing in older records.
 * `actionType` is any string: the service adds action types faster than the spec lists them.
 */
export const auditLogRecordSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  changeLog: z.string().nullish(),
  actionType: z.string().min(1),
  date: z.string().min(1),
  time: z.string().min(1),
  updatedBy: z.string().nullish(),
  updatedByUserID: z.string().nullish(),
  // Typed `object` in the OpenAPI document, a string in every sample, absent in older ones.
  modifierEmail: z.union([z.string(), z.record(z.string(), z.unknown()), z.null()]).optional(),
  changes: z.record(z.string(), z.unknown()).nullish(),
  tags: z.array(z.string()).nullish(),
  targetAppIDs: z.array(z.string()).nullish(),
});
export type AuditLogRecord = z.infer<typeof auditLogRecordSchema>;
