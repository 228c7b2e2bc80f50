// The fields of one rule edit: which fields changed, their rule_changes rows and the summary's phrase
// for each, decided together so that rows and phrase never disagree (src/diff/rules.ts pairs the rules).
import type { AuditRule } from "../api/schemas.ts";
import { describeCondition, diffCondition, pairConditions } from "./ruleConditions.ts";
import { arrow, listDelta, pathChanges, sameValue, shortValue, textDiff } from "./values.ts";

/** Fields the diff knows how to describe; any other field of a rule is diffed generically. */
const KNOWN_FIELDS = new Set([
  "id",
  "groupName",
  "percentagePass",
  "conditionJSON",
  "returnValueJSON",
  "environment",
  "enabledEnvironments",
  "salt",
  "rollouts",
]);

/** A rule without the expected shape: every top-level field diffed by path. */
export function genericFields(before: unknown, after: unknown, summarise: boolean): FieldDiff[] {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(before) || !isObject(after)) {
    const cs = pathChanges(before, after);
    return cs.length === 0
      ? []
      : [{ rows: cs.map((c) => ({ field: `$${c.path}`, ...c })), phrase: `rule value: ${arrow(cs[0]!)}` }];
  }
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.flatMap((key) => pathField(key, before[key], after[key], summarise));
}

/** A field diffed by JSON path: one row per changed path, one phrase (when `summarise`). */
function pathField(field: string, before: unknown, after: unknown, summarise: boolean): FieldDiff[] {
  const cs = pathChanges(before, after);
  if (cs.length === 0) return [];
  return [
    {
      rows: cs.map((c) => ({ field: field + c.path, oldValue: c.oldValue, newValue: c.newValue })),
      phrase: summarise ? `${field}: ${cs.map((c) => `${c.path || "$"} ${arrow(c)}`).join(", ")}` : "",
    },
  ];
}

export function describeRule(rule: AuditRule): string {
  const bits: string[] = [];
  if (rule.percentagePass !== undefined) bits.push(`pass ${rule.percentagePass}%`);
  for (const condition of rule.conditionJSON ?? []) bits.push(`condition ${describeCondition(condition)}`);
  if (rule.enabledEnvironments) bits.push(`environments: ${rule.enabledEnvironments.join(", ")}`);
  return bits.length > 0 ? ` (${bits.join(", ")})` : "";
}

export interface FieldChange {
  field: string;
  oldValue: unknown;
  newValue: unknown;
}

/**
 * One changed field of a rule: its rule_changes rows and its phrase of the summary, decided together.
 * Without `summarise` (a config version's diff keeps the rows alone) the cheap phrases stay empty.
 */
export interface FieldDiff {
  rows: FieldChange[];
  phrase: string;
}

interface Sides {
  before: AuditRule;
  after: AuditRule;
  summarise: boolean;
}

// Module-level, not a closure per rule: the diff runs for every rule of every edit.
function plainField(out: FieldDiff[], field: keyof AuditRule, sides: Sides, phrase: Phrase): void {
  const oldValue = sides.before[field];
  const newValue = sides.after[field];
  if (sameValue(oldValue, newValue)) return;
  out.push({
    rows: [{ field, oldValue, newValue }],
    phrase: sides.summarise ? phrase(oldValue, newValue) : "",
  });
}

/** Every changed field of a rule, in summary order. */
export function diffRuleFields(before: AuditRule, after: AuditRule, summarise: boolean): FieldDiff[] {
  const out: FieldDiff[] = [];
  const sides = { before, after, summarise };
  plainField(out, "groupName", sides, namePhrase);
  plainField(out, "percentagePass", sides, passPhrase);
  for (const pair of pairConditions(before.conditionJSON ?? [], after.conditionJSON ?? [])) {
    if (pair.kind === "added") {
      out.push({
        rows: [{ field: `conditionJSON[${pair.newIndex}]`, oldValue: undefined, newValue: pair.after }],
        phrase: `condition added: ${describeCondition(pair.after)}`,
      });
    } else if (pair.kind === "removed") {
      out.push({
        rows: [{ field: `conditionJSON[${pair.oldIndex}]`, oldValue: pair.before, newValue: undefined }],
        phrase: `condition removed: ${describeCondition(pair.before)}`,
      });
    } else {
      const changed = diffCondition(pair.before, pair.after, `conditionJSON[${pair.newIndex}]`);
      if (changed)
        out.push({ rows: changed.rows, phrase: `condition ${pair.newIndex} changed: ${changed.phrase}` });
    }
  }
  const returnValue = diffReturnValue(before.returnValueJSON, after.returnValueJSON);
  if (returnValue) out.push(returnValue);
  plainField(out, "environment", sides, environmentPhrase);
  plainField(out, "enabledEnvironments", sides, describeEnvironments);
  plainField(out, "salt", sides, saltPhrase);
  out.push(...pathField("rollouts", before.rollouts, after.rollouts, summarise));
  for (const key of unknownKeys(before, after))
    out.push(...pathField(key, before[key], after[key], summarise));
  return out;
}

export type ParsedJson = { ok: true; value: unknown } | { ok: false };

/** Parsed once; the diff reads the result in both the rows and the phrase. */
export function parseJson(text: string | undefined): ParsedJson {
  if (text === undefined) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * returnValueJSON: JSON-path changes when both sides parse (the same JSON formatted differently is no
 * change), else a word diff of the two texts, shown hunk by hunk so a long value's change stays visible.
 */
function diffReturnValue(before: string | undefined, after: string | undefined): FieldDiff | null {
  if (before === after) return null;
  const b = parseJson(before);
  const a = parseJson(after);
  if (b.ok && a.ok) {
    const cs = pathChanges(b.value, a.value);
    if (cs.length === 0) return null;
    return {
      rows: cs.map((c) => ({
        field: `returnValueJSON $${c.path}`,
        oldValue: c.oldValue,
        newValue: c.newValue,
      })),
      phrase: `return value: ${cs.map((c) => `$${c.path} ${arrow(c)}`).join(", ")}`,
    };
  }
  const rows = [{ field: "returnValueJSON", oldValue: before, newValue: after }];
  if (before === undefined || after === undefined) {
    return { rows, phrase: `return value ${shortValue(before)} → ${shortValue(after)}` };
  }
  return { rows, phrase: `return value text: ${JSON.stringify(textDiff(before, after))}` };
}

function unknownKeys(before: AuditRule, after: AuditRule): string[] {
  const keys: string[] = [];
  for (const key of Object.keys(before)) if (!KNOWN_FIELDS.has(key)) keys.push(key);
  for (const key of Object.keys(after))
    if (!KNOWN_FIELDS.has(key) && !Object.hasOwn(before, key)) keys.push(key);
  return keys.length > 1 ? keys.sort() : keys;
}

// ---- the one-line summary -------------------------------------------------------------------

type Phrase = (before: unknown, after: unknown) => string;
const namePhrase: Phrase = (b, a) => `name ${arrow({ oldValue: b, newValue: a })}`;
const passPhrase: Phrase = (b, a) => `pass ${percent(b)} → ${percent(a)}`;
const environmentPhrase: Phrase = (b, a) => `environment ${arrow({ oldValue: b, newValue: a })}`;
const saltPhrase: Phrase = () => "salt changed";

function percent(value: unknown): string {
  return typeof value === "number" ? `${value}%` : shortValue(value);
}

function describeEnvironments(before: unknown, after: unknown): string {
  if (!Array.isArray(before) || !Array.isArray(after)) {
    return `environments: ${shortValue(before ?? null)} → ${shortValue(after ?? null)}`;
  }
  const { added, removed } = listDelta(before, after);
  const bits = [...added.map((e) => `+${String(e)}`), ...removed.map((e) => `-${String(e)}`)];
  return `environments: ${bits.length > 0 ? bits.join(" ") : "reordered"}`;
}
