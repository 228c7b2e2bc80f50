// The sync validates every audit record it receives, and the rules of every rule edit: zod's general
// machinery was ~7 % of a backfill's CPU. These checks answer the common case, a well-formed value, by
// hand and give the same result zod would; anything they do not plainly accept (a wrong type, an odd
// object) goes to the zod schema itself, so every issue of an invalid value is still zod's.
import {
  type AuditCondition,
  type AuditLogRecord,
  type AuditRule,
  auditLogRecordSchema,
  auditRuleSchema,
} from "./schemas.ts";

type Loose = Record<string, unknown>;

/**
 * An object zod takes as it is. Own `__proto__` and `constructor` keys are left to zod: its copy drops
 * the first (or makes it the copy's prototype) and its plain-object test reads the second.
 */
function plainObject(value: unknown): value is Loose {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return (
    (proto === Object.prototype || proto === null) &&
    !Object.hasOwn(value, "__proto__") &&
    !Object.hasOwn(value, "constructor")
  );
}

function optionalText(value: unknown): boolean {
  return value === undefined || typeof value === "string";
}

function nullishText(value: unknown): boolean {
  return value === undefined || value === null || typeof value === "string";
}

function filledText(value: unknown): boolean {
  return typeof value === "string" && value.length > 0;
}

function texts(value: unknown[]): boolean {
  for (let i = 0; i < value.length; i += 1) if (typeof value[i] !== "string") return false;
  return true;
}

function nullishTexts(value: unknown): boolean {
  return value === undefined || value === null || (Array.isArray(value) && texts(value));
}

function optionalInteger(value: unknown): boolean {
  return value === undefined || (typeof value === "number" && Number.isSafeInteger(value));
}

/** auditLogRecordSchema's checks; its output is the input's own fields (modifierEmail as text or null). */
function plainRecord(raw: unknown): raw is AuditLogRecord {
  if (!plainObject(raw)) return false;
  const email = raw.modifierEmail;
  const changes = raw.changes;
  return (
    filledText(raw.id) &&
    typeof raw.name === "string" &&
    nullishText(raw.changeLog) &&
    filledText(raw.actionType) &&
    filledText(raw.date) &&
    filledText(raw.time) &&
    nullishText(raw.updatedBy) &&
    nullishText(raw.updatedByUserID) &&
    nullishText(email) &&
    (changes === undefined || changes === null || plainObject(changes)) &&
    nullishTexts(raw.tags) &&
    nullishTexts(raw.targetAppIDs)
  );
}

/**
 * An audit record validated as auditLogRecordSchema.safeParse does. A valid record read by the fast
 * check is the received object itself: zod's output is a copy with the same values in every field the
 * store reads.
 */
export function parseAuditLogRecord(raw: unknown): ReturnType<typeof auditLogRecordSchema.safeParse> {
  if (plainRecord(raw)) return { success: true, data: raw };
  return auditLogRecordSchema.safeParse(raw);
}

// zod copies a loose object's known keys first, in its shape's order, then the others as they came.
const RULE_KEYS = Object.keys(auditRuleSchema.shape);
const CONDITION_KEYS = Object.keys(auditRuleSchema.shape.conditionJSON.unwrap().element.shape);
const RULE_KEY_SET = new Set<string>(RULE_KEYS);
const CONDITION_KEY_SET = new Set<string>(CONDITION_KEYS);

/**
 * A copy of `raw` as zod's looseObject writes it: the schema's keys first in its order, then the others
 * in the input's (the diff stores conditions as JSON text, so the order is part of the output).
 */
function zodOrdered(raw: Loose, keys: readonly string[], known: ReadonlySet<string>): Loose {
  const copy: Loose = {};
  for (const key of keys) if (key in raw) copy[key] = raw[key];
  for (const key of Object.keys(raw)) if (!known.has(key)) copy[key] = raw[key];
  return copy;
}

function plainCondition(raw: unknown): raw is AuditCondition {
  return (
    plainObject(raw) &&
    optionalInteger(raw.conditionType) &&
    optionalInteger(raw.operator) &&
    (raw.value === undefined || Array.isArray(raw.value)) &&
    (raw.extraConfig === undefined || plainObject(raw.extraConfig))
  );
}

function plainRule(raw: unknown): raw is Loose {
  if (!plainObject(raw)) return false;
  const pass = raw.percentagePass;
  const conditions = raw.conditionJSON;
  if (conditions !== undefined) {
    if (!Array.isArray(conditions)) return false;
    for (let i = 0; i < conditions.length; i += 1) if (!plainCondition(conditions[i])) return false;
  }
  return (
    typeof raw.id === "string" &&
    optionalText(raw.groupName) &&
    (pass === undefined || (typeof pass === "number" && Number.isFinite(pass))) &&
    optionalText(raw.returnValueJSON) &&
    optionalText(raw.salt) &&
    nullishText(raw.environment) &&
    (raw.rollouts === undefined || Array.isArray(raw.rollouts)) &&
    nullishTexts(raw.enabledEnvironments)
  );
}

/** A rule as auditRuleSchema.safeParse gives it (the same keys in the same order), or null when invalid. */
export function parseAuditRule(raw: unknown): AuditRule | null {
  if (plainRule(raw)) {
    const rule = zodOrdered(raw, RULE_KEYS, RULE_KEY_SET);
    const conditions = raw.conditionJSON;
    if (Array.isArray(conditions))
      rule.conditionJSON = conditions.map((c: Loose) => zodOrdered(c, CONDITION_KEYS, CONDITION_KEY_SET));
    return rule as AuditRule;
  }
  const result = auditRuleSchema.safeParse(raw);
  return result.success ? result.data : null;
}
