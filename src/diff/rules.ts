// The rule diff: changes.rules.old → changes.rules.new, rules matched by id. Produces the rows of
// rule_changes and the one-line summary of rule_diff_summaries. Pure: no database here.
import { diffWordsWithSpace } from "diff";
import { type AuditCondition, type AuditRule, ruleChangesSchema } from "../api/schemas.ts";
import { arrow, encodeValue, listDelta, pathChanges, sameValue, shortValue } from "./values.ts";

/** Bump when the diff output changes: stored diffs with an older version are recomputed by backfill. */
export const DIFF_VERSION = 1;

export type RuleChangeKind = "added" | "removed" | "modified" | "moved";

/** One row of rule_changes. Positions are 1-based (the rule's place in evaluation order). */
export interface RuleChange {
  ruleId: string;
  ruleName: string | null;
  change: RuleChangeKind;
  /** Field path for modified rows (`percentagePass`, `conditionJSON[2].value`, `returnValueJSON $.color`). */
  field: string | null;
  /** JSON text of the old / new value; NULL when absent on that side. */
  oldValue: string | null;
  newValue: string | null;
  oldPosition: number | null;
  newPosition: number | null;
}

export interface RuleDiff {
  changes: RuleChange[];
  /** One line, e.g. `rule "Beta users": pass 10% → 50%; condition added: type 1 op 0 ["ios"]`. */
  summary: string;
}

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

/** The record's `changes` object (or its JSON text) → the diff, or null when it has no rules. */
export function diffRecordChanges(changes: unknown): RuleDiff | null {
  const parsed = typeof changes === "string" ? safeJsonParse(changes) : changes;
  if (parsed === null || typeof parsed !== "object" || !("rules" in parsed)) return null;
  const rules = (parsed as { rules: unknown }).rules;
  if (rules === null || rules === undefined) return null;
  return diffRuleSets(rules);
}

/** Diffs `{ old, new }`. A shape that is not two lists of rules is diffed as one opaque value. */
export function diffRuleSets(rules: unknown): RuleDiff {
  const parsed = ruleChangesSchema.safeParse(rules);
  if (!parsed.success) {
    const old = rules !== null && typeof rules === "object" ? (rules as { old?: unknown }).old : undefined;
    const next = rules !== null && typeof rules === "object" ? (rules as { new?: unknown }).new : undefined;
    return {
      changes: [
        {
          ruleId: "",
          ruleName: null,
          change: "modified",
          field: "rules",
          oldValue: encodeValue(old),
          newValue: encodeValue(next),
          oldPosition: null,
          newPosition: null,
        },
      ],
      summary: "rules changed in a shape that is not a list of rules (see rule_changes field 'rules')",
    };
  }
  return diffRules(parsed.data.old, parsed.data.new);
}

interface Keyed {
  key: string;
  rule: AuditRule;
  /** 1-based. */
  position: number;
}

/** Keys rules by id; a repeated id (malformed data) gets `#2`, `#3`… so nothing is silently merged. */
function keyRules(rules: readonly AuditRule[]): Keyed[] {
  const seen = new Map<string, number>();
  return rules.map((rule, index) => {
    const count = (seen.get(rule.id) ?? 0) + 1;
    seen.set(rule.id, count);
    return { key: count === 1 ? rule.id : `${rule.id}#${count}`, rule, position: index + 1 };
  });
}

export function diffRules(oldRules: readonly AuditRule[], newRules: readonly AuditRule[]): RuleDiff {
  const oldKeyed = keyRules(oldRules);
  const newKeyed = keyRules(newRules);
  const oldByKey = new Map(oldKeyed.map((k) => [k.key, k]));
  const newByKey = new Map(newKeyed.map((k) => [k.key, k]));
  const moved = movedKeys(
    oldKeyed.filter((k) => newByKey.has(k.key)).map((k) => k.key),
    newKeyed.filter((k) => oldByKey.has(k.key)).map((k) => k.key),
  );

  const changes: RuleChange[] = [];
  const phrases: string[] = [];

  // Report in the new evaluation order, then the removed rules in their old order.
  for (const next of newKeyed) {
    const before = oldByKey.get(next.key);
    const name = ruleName(next.rule);
    const base = { ruleId: next.rule.id, ruleName: name };
    if (!before) {
      changes.push({
        ...base,
        change: "added",
        field: null,
        oldValue: null,
        newValue: encodeValue(next.rule),
        oldPosition: null,
        newPosition: next.position,
      });
      phrases.push(`rule ${JSON.stringify(name)} added at ${next.position}${describeRule(next.rule)}`);
      continue;
    }
    const parts: string[] = [];
    if (moved.has(next.key)) {
      changes.push({
        ...base,
        change: "moved",
        field: null,
        oldValue: null,
        newValue: null,
        oldPosition: before.position,
        newPosition: next.position,
      });
      parts.push(`moved ${before.position} → ${next.position}`);
    }
    for (const fieldChange of diffRuleFields(before.rule, next.rule)) {
      changes.push({
        ...base,
        change: "modified",
        field: fieldChange.field,
        oldValue: encodeValue(fieldChange.oldValue),
        newValue: encodeValue(fieldChange.newValue),
        oldPosition: before.position,
        newPosition: next.position,
      });
    }
    parts.push(...describeFieldChanges(before.rule, next.rule));
    if (parts.length > 0) phrases.push(`rule ${JSON.stringify(name)}: ${parts.join("; ")}`);
  }
  for (const before of oldKeyed) {
    if (newByKey.has(before.key)) continue;
    const name = ruleName(before.rule);
    changes.push({
      ruleId: before.rule.id,
      ruleName: name,
      change: "removed",
      field: null,
      oldValue: encodeValue(before.rule),
      newValue: null,
      oldPosition: before.position,
      newPosition: null,
    });
    phrases.push(`rule ${JSON.stringify(name)} removed (was ${before.position})`);
  }

  return { changes, summary: phrases.length > 0 ? phrases.join("; ") : "rules unchanged" };
}

function ruleName(rule: AuditRule): string {
  return rule.groupName && rule.groupName.length > 0 ? rule.groupName : rule.id;
}

function describeRule(rule: AuditRule): string {
  const bits: string[] = [];
  if (rule.percentagePass !== undefined) bits.push(`pass ${rule.percentagePass}%`);
  for (const condition of rule.conditionJSON ?? []) bits.push(`condition ${describeCondition(condition)}`);
  if (rule.enabledEnvironments) bits.push(`environments: ${rule.enabledEnvironments.join(", ")}`);
  return bits.length > 0 ? ` (${bits.join(", ")})` : "";
}

/**
 * Rules the user reordered: common rules outside a longest common subsequence of the two orders. An
 * insertion or removal shifts other rules' positions without marking them moved; a swap marks one.
 */
function movedKeys(oldOrder: readonly string[], newOrder: readonly string[]): Set<string> {
  const n = oldOrder.length;
  const m = newOrder.length;
  const table: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const row = table[i]!;
      row[j] =
        oldOrder[i] === newOrder[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, row[j + 1]!);
    }
  }
  const kept = new Set<string>();
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (oldOrder[i] === newOrder[j]) {
      kept.add(oldOrder[i]!);
      i++;
      j++;
    } else if (table[i + 1]![j]! >= table[i]![j + 1]!) i++;
    else j++;
  }
  return new Set(newOrder.filter((key) => !kept.has(key)));
}

interface FieldChange {
  field: string;
  oldValue: unknown;
  newValue: unknown;
}

/** Every changed field of a rule, as rule_changes rows (field path + old/new value). */
function diffRuleFields(before: AuditRule, after: AuditRule): FieldChange[] {
  const out: FieldChange[] = [];
  const plain = (field: keyof AuditRule) => {
    if (!sameValue(before[field], after[field])) {
      out.push({ field, oldValue: before[field], newValue: after[field] });
    }
  };
  plain("groupName");
  plain("percentagePass");
  for (const pair of pairConditions(before.conditionJSON ?? [], after.conditionJSON ?? [])) {
    if (pair.kind === "added") {
      out.push({ field: `conditionJSON[${pair.newIndex}]`, oldValue: undefined, newValue: pair.after });
    } else if (pair.kind === "removed") {
      out.push({ field: `conditionJSON[${pair.oldIndex}]`, oldValue: pair.before, newValue: undefined });
    } else {
      for (const key of conditionKeys(pair.before, pair.after)) {
        const field = `conditionJSON[${pair.newIndex}].${key}`;
        const oldValue = pair.before[key];
        const newValue = pair.after[key];
        if (key === "extraConfig" || !KNOWN_CONDITION_FIELDS.includes(key as never)) {
          for (const c of pathChanges(oldValue, newValue)) {
            out.push({ field: field + c.path, oldValue: c.oldValue, newValue: c.newValue });
          }
        } else if (!sameValue(oldValue, newValue)) {
          out.push({ field, oldValue, newValue });
        }
      }
    }
  }
  for (const c of returnValueChanges(before.returnValueJSON, after.returnValueJSON)) {
    out.push({ field: c.field, oldValue: c.oldValue, newValue: c.newValue });
  }
  plain("environment");
  plain("enabledEnvironments");
  plain("salt");
  for (const c of pathChanges(before.rollouts, after.rollouts)) {
    out.push({ field: `rollouts${c.path}`, oldValue: c.oldValue, newValue: c.newValue });
  }
  for (const key of unknownKeys(before, after)) {
    for (const c of pathChanges(before[key], after[key])) {
      out.push({ field: key + c.path, oldValue: c.oldValue, newValue: c.newValue });
    }
  }
  return out;
}

function unknownKeys(before: AuditRule, after: AuditRule): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => !KNOWN_FIELDS.has(key)).sort();
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

function safeJsonParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parsesAsJson(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** returnValueJSON: JSON-path changes when both sides parse, else the two texts. */
function returnValueChanges(before: string | undefined, after: string | undefined): FieldChange[] {
  if (before === after) return [];
  if (parsesAsJson(before) && parsesAsJson(after)) {
    return pathChanges(JSON.parse(before!), JSON.parse(after!)).map((c) => ({
      field: `returnValueJSON $${c.path}`,
      oldValue: c.oldValue,
      newValue: c.newValue,
    }));
  }
  return [{ field: "returnValueJSON", oldValue: before, newValue: after }];
}

// ---- the one-line summary -------------------------------------------------------------------

function describeCondition(condition: AuditCondition): string {
  const bits = [`type ${condition.conditionType ?? "?"}`, `op ${condition.operator ?? "?"}`];
  bits.push(shortValue(condition.value ?? []));
  if (condition.extraConfig && Object.keys(condition.extraConfig).length > 0) {
    bits.push(shortValue(condition.extraConfig));
  }
  for (const key of conditionKeys(condition, condition)) {
    if (!KNOWN_CONDITION_FIELDS.includes(key as never)) bits.push(`${key} ${shortValue(condition[key])}`);
  }
  return bits.join(" ");
}

function describeFieldChanges(before: AuditRule, after: AuditRule): string[] {
  const parts: string[] = [];
  if (!sameValue(before.groupName, after.groupName)) {
    parts.push(`name ${shortValue(before.groupName)} → ${shortValue(after.groupName)}`);
  }
  if (!sameValue(before.percentagePass, after.percentagePass)) {
    parts.push(`pass ${percent(before.percentagePass)} → ${percent(after.percentagePass)}`);
  }
  for (const pair of pairConditions(before.conditionJSON ?? [], after.conditionJSON ?? [])) {
    if (pair.kind === "added") parts.push(`condition added: ${describeCondition(pair.after)}`);
    else if (pair.kind === "removed") parts.push(`condition removed: ${describeCondition(pair.before)}`);
    else
      parts.push(`condition ${pair.newIndex} changed: ${describeConditionChange(pair.before, pair.after)}`);
  }
  if (before.returnValueJSON !== after.returnValueJSON) {
    parts.push(describeReturnValue(before.returnValueJSON, after.returnValueJSON));
  }
  if (!sameValue(before.environment, after.environment)) {
    parts.push(`environment ${shortValue(before.environment)} → ${shortValue(after.environment)}`);
  }
  if (!sameValue(before.enabledEnvironments, after.enabledEnvironments)) {
    parts.push(describeEnvironments(before.enabledEnvironments, after.enabledEnvironments));
  }
  if (!sameValue(before.salt, after.salt)) parts.push("salt changed");
  const rollouts = pathChanges(before.rollouts, after.rollouts);
  if (rollouts.length > 0)
    parts.push(`rollouts: ${rollouts.map((c) => `${c.path || "$"} ${arrow(c)}`).join(", ")}`);
  for (const key of unknownKeys(before, after)) {
    const changes = pathChanges(before[key], after[key]);
    if (changes.length > 0)
      parts.push(`${key}: ${changes.map((c) => `${c.path || "$"} ${arrow(c)}`).join(", ")}`);
  }
  return parts;
}

function percent(value: number | undefined): string {
  return value === undefined ? "none" : `${value}%`;
}

function describeConditionChange(before: AuditCondition, after: AuditCondition): string {
  const bits: string[] = [];
  if (!sameValue(before.conditionType, after.conditionType)) {
    bits.push(`type ${shortValue(before.conditionType)} → ${shortValue(after.conditionType)}`);
  }
  if (!sameValue(before.operator, after.operator)) {
    bits.push(`op ${shortValue(before.operator)} → ${shortValue(after.operator)}`);
  }
  if (!sameValue(before.value, after.value)) {
    if (Array.isArray(before.value) && Array.isArray(after.value)) {
      const { added, removed } = listDelta(before.value, after.value);
      const delta = [...added.map((v) => `+${shortValue(v)}`), ...removed.map((v) => `-${shortValue(v)}`)];
      bits.push(`value ${delta.length > 0 ? delta.join(" ") : "reordered"}`);
    } else {
      bits.push(`value ${shortValue(before.value)} → ${shortValue(after.value)}`);
    }
  }
  for (const key of conditionKeys(before, after)) {
    if (key !== "extraConfig" && KNOWN_CONDITION_FIELDS.includes(key as never)) continue;
    const changes = pathChanges(before[key], after[key]);
    if (changes.length > 0)
      bits.push(`${key} ${changes.map((c) => `${c.path || "$"} ${arrow(c)}`).join(", ")}`);
  }
  return bits.join(", ");
}

function describeReturnValue(before: string | undefined, after: string | undefined): string {
  if (parsesAsJson(before) && parsesAsJson(after)) {
    const changes = pathChanges(JSON.parse(before!), JSON.parse(after!));
    return `return value: ${changes.map((c) => `$${c.path} ${arrow(c)}`).join(", ")}`;
  }
  if (before === undefined || after === undefined) {
    return `return value ${shortValue(before)} → ${shortValue(after)}`;
  }
  // Not JSON: a word diff, [-removed-]{+added+}, like `git diff --word-diff`.
  const text = diffWordsWithSpace(before, after)
    .map((part) => (part.added ? `{+${part.value}+}` : part.removed ? `[-${part.value}-]` : part.value))
    .join("");
  return `return value text: ${shortValue(text)}`;
}

function describeEnvironments(
  before: string[] | null | undefined,
  after: string[] | null | undefined,
): string {
  if (!Array.isArray(before) || !Array.isArray(after)) {
    return `environments: ${shortValue(before ?? null)} → ${shortValue(after ?? null)}`;
  }
  const { added, removed } = listDelta(before, after);
  const bits = [...added.map((e) => `+${String(e)}`), ...removed.map((e) => `-${String(e)}`)];
  return `environments: ${bits.length > 0 ? bits.join(" ") : "reordered"}`;
}
