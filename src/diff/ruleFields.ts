// The fields of one rule edit: which fields changed, their rule_changes rows and the summary's phrase
// for each, decided together so that rows and phrase never disagree (src/diff/rules.ts pairs the rules).
import type { AuditCondition, AuditRule } from "../api/schemas.ts";
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
const KNOWN_CONDITION_FIELDS = ["conditionType", "operator", "value", "extraConfig"] as const;

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

interface FieldChange {
  field: string;
  oldValue: unknown;
  newValue: unknown;
}

/**
 * One changed field of a rule: its rule_changes rows and its phrase of the summary, decided together.
 * Without `summarise` (a config version's diff keeps the rows alone) the cheap phrases stay empty.
 */
interface FieldDiff {
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

/** The changed parts of a condition paired with its earlier version. */
function diffCondition(before: AuditCondition, after: AuditCondition, prefix: string): FieldDiff | null {
  const rows: FieldChange[] = [];
  const bits: string[] = [];
  for (const key of conditionKeys(before, after)) {
    const field = `${prefix}.${key}`;
    const oldValue = before[key];
    const newValue = after[key];
    if (key === "extraConfig" || !KNOWN_CONDITION_FIELDS.includes(key as never)) {
      const cs = pathChanges(oldValue, newValue);
      if (cs.length === 0) continue;
      rows.push(...cs.map((c) => ({ field: field + c.path, oldValue: c.oldValue, newValue: c.newValue })));
      bits.push(`${key} ${cs.map((c) => `${c.path || "$"} ${arrow(c)}`).join(", ")}`);
      continue;
    }
    if (sameValue(oldValue, newValue)) continue;
    rows.push({ field, oldValue, newValue });
    if (key === "value" && Array.isArray(oldValue) && Array.isArray(newValue)) {
      const { added, removed } = listDelta(oldValue, newValue);
      const delta = [...added.map((v) => `+${shortValue(v)}`), ...removed.map((v) => `-${shortValue(v)}`)];
      bits.push(`value ${delta.length > 0 ? delta.join(" ") : "reordered"}`);
    } else {
      bits.push(
        `${key === "conditionType" ? "type" : key === "operator" ? "op" : key} ${arrow({ oldValue, newValue })}`,
      );
    }
  }
  return rows.length === 0 ? null : { rows, phrase: bits.join(", ") };
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

function conditionKeys(before: AuditCondition, after: AuditCondition): string[] {
  const extra = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of KNOWN_CONDITION_FIELDS) extra.delete(key);
  return [...KNOWN_CONDITION_FIELDS, ...[...extra].sort()];
}

type ConditionPair =
  | { kind: "added"; after: AuditCondition; newIndex: number }
  | { kind: "removed"; before: AuditCondition; oldIndex: number }
  | { kind: "changed"; before: AuditCondition; after: AuditCondition; oldIndex: number; newIndex: number };

/**
 * Conditions have no id. Pair them: identical ones first (unchanged, whatever their order, since
 * conditions of a rule all have to hold), then the same conditionType in order, then the same
 * position; whatever is left was added or removed. Indexes are 1-based.
 */
function pairConditions(
  before: readonly AuditCondition[],
  after: readonly AuditCondition[],
): ConditionPair[] {
  if (before.length === 0 && after.length === 0) return [];
  const oldFree = new Set(before.map((_, i) => i));
  const newFree = new Set(after.map((_, i) => i));
  const changed: ConditionPair[] = [];
  const take = (
    match: (o: AuditCondition, n: AuditCondition, oi: number, ni: number) => boolean,
    keep: boolean,
  ) => {
    for (const ni of [...newFree]) {
      for (const oi of oldFree) {
        if (match(before[oi]!, after[ni]!, oi, ni)) {
          oldFree.delete(oi);
          newFree.delete(ni);
          if (keep) {
            changed.push({
              kind: "changed",
              before: before[oi]!,
              after: after[ni]!,
              oldIndex: oi + 1,
              newIndex: ni + 1,
            });
          }
          break;
        }
      }
    }
  };
  take((o, n) => sameValue(o, n), false);
  take((o, n) => o.conditionType === n.conditionType, true);
  take((_o, _n, oi, ni) => oi === ni, true);
  const pairs: ConditionPair[] = changed.sort((a, b) => newIndexOf(a) - newIndexOf(b));
  for (const oi of oldFree) pairs.push({ kind: "removed", before: before[oi]!, oldIndex: oi + 1 });
  for (const ni of newFree) pairs.push({ kind: "added", after: after[ni]!, newIndex: ni + 1 });
  return pairs;
}

function newIndexOf(pair: ConditionPair): number {
  return pair.kind === "removed" ? 0 : pair.newIndex;
}

// ---- the one-line summary -------------------------------------------------------------------

/**
 * The condition's type by the name its own JSON gives (a string `type`, as the console's conditions
 * write it: `country`, `app_version`), else its number: the platform documents no mapping from
 * `conditionType` numbers to names (see the API notes), so none is guessed.
 */
function conditionTypeText(condition: AuditCondition): { text: string; namedBy: string | null } {
  const name = condition.type;
  if (typeof name === "string" && name.trim() !== "")
    return { text: `${name} (type ${condition.conditionType ?? "?"})`, namedBy: "type" };
  return { text: `type ${condition.conditionType ?? "?"}`, namedBy: null };
}

function describeCondition(condition: AuditCondition): string {
  const type = conditionTypeText(condition);
  const bits = [type.text, `op ${condition.operator ?? "?"}`];
  bits.push(shortValue(condition.value ?? []));
  if (condition.extraConfig && Object.keys(condition.extraConfig).length > 0) {
    bits.push(shortValue(condition.extraConfig));
  }
  for (const key of conditionKeys(condition, condition)) {
    if (key === type.namedBy) continue;
    if (!KNOWN_CONDITION_FIELDS.includes(key as never)) bits.push(`${key} ${shortValue(condition[key])}`);
  }
  return bits.join(" ");
}

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
