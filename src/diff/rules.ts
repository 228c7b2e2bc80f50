// The rule diff: changes.rules.old → changes.rules.new, rules matched by id. Produces the rows of
// rule_changes and the one-line summary of rule_diff_summaries. Pure: no database here.

import { describeRule, diffRuleFields, genericFields, parseJson } from "./ruleFields.ts";
import { assignKeys, type Item, toItems } from "./ruleItems.ts";
import { encodeValue, sameValue } from "./values.ts";

/**
 * Bump when the diff output changes: stored diffs with an older version are recomputed by backfill.
 * 2: summary built from the same field walk as the rows; JSON-equal return values are no change; text
 * diffs shown hunk by hunk; rules validated one by one; duplicate ids paired by content.
 * 3: a condition whose JSON names its type (a string `type`) is summarised by that name.
 */
export const DIFF_VERSION = 3;

type RuleChangeKind = "added" | "removed" | "modified" | "moved";

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

/** The record's `changes` object (or its JSON text) → the diff, or null when it has no rules. */
export function diffRecordChanges(changes: unknown): RuleDiff | null {
  const text = typeof changes === "string" ? parseJson(changes) : null;
  const parsed = text === null ? changes : text.ok ? text.value : undefined;
  if (parsed === null || typeof parsed !== "object" || !("rules" in parsed)) return null;
  const rules = (parsed as { rules: unknown }).rules;
  if (rules === null || rules === undefined) return null;
  return diffRuleSets(rules);
}

/**
 * Diffs `{ old, new }`. A shape that is not two lists is diffed as one opaque value. `summarise` false:
 * the rows alone, the summary left empty (a config version's diff stores no summary).
 */
export function diffRuleSets(rules: unknown, summarise = true): RuleDiff {
  const sides =
    rules !== null && typeof rules === "object" ? (rules as { old?: unknown; new?: unknown }) : {};
  const old = sides.old ?? [];
  const next = sides.new ?? [];
  if (!Array.isArray(old) || !Array.isArray(next)) {
    return {
      changes: [
        {
          ruleId: "",
          ruleName: null,
          change: "modified",
          field: "rules",
          oldValue: encodeValue(sides.old),
          newValue: encodeValue(sides.new),
          oldPosition: null,
          newPosition: null,
        },
      ],
      summary: "rules changed in a shape that is not a list of rules (see rule_changes field 'rules')",
    };
  }
  return diffItems(toItems(old), toItems(next), summarise);
}

/** Read from the raw rule: a valid rule gives the same answer, and unchanged rules stay unvalidated. */
function itemName(item: Item): string {
  const group =
    item.raw !== null && typeof item.raw === "object"
      ? (item.raw as { groupName?: unknown }).groupName
      : undefined;
  return typeof group === "string" && group.length > 0 ? group : (item.id ?? `#${item.position}`);
}

function label(item: Item): string {
  return `rule ${JSON.stringify(itemName(item))}${item.duplicate ? ` (duplicate id ${item.id ?? "none"})` : ""}`;
}

function diffItems(oldItems: readonly Item[], newItems: readonly Item[], summarise: boolean): RuleDiff {
  assignKeys(oldItems, newItems);
  const keyed = { old: oldItems, new: newItems };
  const oldByKey = new Map(keyed.old.map((k) => [k.key, k]));
  const newByKey = new Map(keyed.new.map((k) => [k.key, k]));
  const moved = movedKeys(
    keyed.old.filter((k) => newByKey.has(k.key)).map((k) => k.key),
    keyed.new.filter((k) => oldByKey.has(k.key)).map((k) => k.key),
  );

  const changes: RuleChange[] = [];
  const phrases: string[] = [];

  // Report in the new evaluation order, then the removed rules in their old order.
  for (const next of keyed.new) {
    const before = oldByKey.get(next.key);
    // The common case: a rule the edit left alone.
    if (before && !moved.has(next.key) && sameValue(before.raw, next.raw)) continue;
    const ruleId = next.id ?? "";
    const ruleName = itemName(next);
    if (!before) {
      changes.push({
        ruleId,
        ruleName,
        change: "added",
        field: null,
        oldValue: null,
        newValue: encodeValue(next.raw),
        oldPosition: null,
        newPosition: next.position,
      });
      if (summarise)
        phrases.push(`${label(next)} added at ${next.position}${next.rule ? describeRule(next.rule) : ""}`);
      continue;
    }
    const parts: string[] = [];
    if (moved.has(next.key)) {
      changes.push({
        ruleId,
        ruleName,
        change: "moved",
        field: null,
        oldValue: null,
        newValue: null,
        oldPosition: before.position,
        newPosition: next.position,
      });
      if (summarise) parts.push(`moved ${before.position} → ${next.position}`);
    }
    const fields =
      before.rule && next.rule
        ? diffRuleFields(before.rule, next.rule, summarise)
        : genericFields(before.raw, next.raw, summarise);
    // One walk: each field's rows and its phrase come from the same decision.
    for (const field of fields) {
      for (const row of field.rows) {
        changes.push({
          ruleId,
          ruleName,
          change: "modified",
          field: row.field,
          oldValue: encodeValue(row.oldValue),
          newValue: encodeValue(row.newValue),
          oldPosition: before.position,
          newPosition: next.position,
        });
      }
      if (summarise) parts.push(field.phrase);
    }
    if (parts.length > 0) phrases.push(`${label(next)}: ${parts.join("; ")}`);
  }
  for (const before of keyed.old) {
    if (newByKey.has(before.key)) continue;
    changes.push({
      ruleId: before.id ?? "",
      ruleName: itemName(before),
      change: "removed",
      field: null,
      oldValue: encodeValue(before.raw),
      newValue: null,
      oldPosition: before.position,
      newPosition: null,
    });
    if (summarise) phrases.push(`${label(before)} removed (was ${before.position})`);
  }

  if (!summarise) return { changes, summary: "" };
  return { changes, summary: phrases.length > 0 ? phrases.join("; ") : "rules unchanged" };
}

/**
 * Rules the user reordered: common rules outside a longest common subsequence of the two orders. An
 * insertion or removal shifts other rules' positions without marking them moved; a swap marks one.
 */
function movedKeys(oldOrder: readonly string[], newOrder: readonly string[]): Set<string> {
  const n = oldOrder.length;
  const m = newOrder.length;
  // Most edits keep the order: nothing moved, and no table to build.
  if (n === m && oldOrder.every((key, i) => key === newOrder[i])) return new Set();
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
