// The rule diff: changes.rules.old → changes.rules.new, rules matched by id. Produces the rows of
// rule_changes and the one-line summary of rule_diff_summaries. Pure: no database here.
import { type AuditCondition, type AuditRule, auditRuleSchema } from "../api/schemas.ts";
import { arrow, encodeValue, listDelta, pathChanges, sameValue, shortValue, textDiff } from "./values.ts";

/**
 * Bump when the diff output changes: stored diffs with an older version are recomputed by backfill.
 * 2: summary built from the same field walk as the rows; JSON-equal return values are no change; text
 * diffs shown hunk by hunk; rules validated one by one; duplicate ids paired by content.
 */
export const DIFF_VERSION = 2;

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
  const text = typeof changes === "string" ? parseJson(changes) : null;
  const parsed = text === null ? changes : text.ok ? text.value : undefined;
  if (parsed === null || typeof parsed !== "object" || !("rules" in parsed)) return null;
  const rules = (parsed as { rules: unknown }).rules;
  if (rules === null || rules === undefined) return null;
  return diffRuleSets(rules);
}

/** Diffs `{ old, new }`. A shape that is not two lists is diffed as one opaque value. */
export function diffRuleSets(rules: unknown): RuleDiff {
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
  return diffItems(toItems(old), toItems(next));
}

/**
 * One element of a rules list: validated on its own, so one malformed rule spoils nothing else. A class
 * (not an object literal with a getter per item): every item shares one shape, which the diff of each
 * rule edit reads in its hot loops.
 */
class Item {
  /** The rule's id when it has a string one. */
  readonly id: string | null;
  /** Matches old and new rules (set by assignKeys). */
  key = "";
  /** The id is used by more than one rule on this side: said in the summary. */
  duplicate = false;
  // Validated only when read: most rules of an edit are unchanged and never need it.
  private parsed: AuditRule | null | undefined = undefined;

  constructor(
    readonly raw: unknown,
    /** 1-based. */
    readonly position: number,
  ) {
    const rawId = raw !== null && typeof raw === "object" ? (raw as { id?: unknown }).id : undefined;
    this.id = typeof rawId === "string" ? rawId : null;
  }

  /** The rule when it has the expected shape; null: its fields are diffed generically. */
  get rule(): AuditRule | null {
    if (this.parsed === undefined) {
      const result = auditRuleSchema.safeParse(this.raw);
      this.parsed = result.success ? result.data : null;
    }
    return this.parsed;
  }
}

function toItems(list: readonly unknown[]): Item[] {
  return list.map((raw, index) => new Item(raw, index + 1));
}

/**
 * Keys for matching old and new rules: the id (a rule without one: `#position`). Rules sharing an id
 * (malformed data) are paired identical content first, then in order; the rest are added or removed.
 */
function assignKeys(oldItems: readonly Item[], newItems: readonly Item[]): void {
  const base = (item: Item) => item.id ?? `#${item.position}`;
  const groups = new Map<string, { old: Item[]; new: Item[] }>();
  for (const [side, items] of [
    ["old", oldItems],
    ["new", newItems],
  ] as const) {
    for (const item of items) {
      const group = groups.get(base(item)) ?? { old: [], new: [] };
      group[side].push(item);
      groups.set(base(item), group);
    }
  }
  for (const [id, group] of groups) {
    const duplicate = group.old.length > 1 || group.new.length > 1;
    // Set in place: a copy would read (and so validate) every rule.
    const keyOf = (item: Item, key: string) => {
      item.key = key;
      item.duplicate = duplicate;
    };
    if (!duplicate) {
      for (const item of [...group.old, ...group.new]) keyOf(item, id);
      continue;
    }
    const freeOld = [...group.old];
    const freeNew: Item[] = [];
    let pair = 0;
    for (const item of group.new) {
      const same = freeOld.findIndex((o) => sameValue(o.raw, item.raw));
      if (same < 0) {
        freeNew.push(item);
        continue;
      }
      pair += 1;
      keyOf(freeOld[same]!, `${id}\u0000${pair}`);
      keyOf(item, `${id}\u0000${pair}`);
      freeOld.splice(same, 1);
    }
    for (let k = 0; k < Math.max(freeOld.length, freeNew.length); k++) {
      pair += 1;
      if (freeOld[k]) keyOf(freeOld[k]!, `${id}\u0000${pair}`);
      if (freeNew[k]) keyOf(freeNew[k]!, `${id}\u0000${pair}`);
    }
  }
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

function diffItems(oldItems: readonly Item[], newItems: readonly Item[]): RuleDiff {
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
      parts.push(`moved ${before.position} → ${next.position}`);
    }
    const fields =
      before.rule && next.rule ? diffRuleFields(before.rule, next.rule) : genericFields(before.raw, next.raw);
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
      parts.push(field.phrase);
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
    phrases.push(`${label(before)} removed (was ${before.position})`);
  }

  return { changes, summary: phrases.length > 0 ? phrases.join("; ") : "rules unchanged" };
}

/** A rule without the expected shape: every top-level field diffed by path. */
function genericFields(before: unknown, after: unknown): FieldDiff[] {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(before) || !isObject(after)) {
    const cs = pathChanges(before, after);
    return cs.length === 0
      ? []
      : [{ rows: cs.map((c) => ({ field: `$${c.path}`, ...c })), phrase: `rule value: ${arrow(cs[0]!)}` }];
  }
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.flatMap((key) => pathField(key, before[key], after[key]));
}

/** A field diffed by JSON path: one row per changed path, one phrase. */
function pathField(field: string, before: unknown, after: unknown): FieldDiff[] {
  const cs = pathChanges(before, after);
  if (cs.length === 0) return [];
  return [
    {
      rows: cs.map((c) => ({ field: field + c.path, oldValue: c.oldValue, newValue: c.newValue })),
      phrase: `${field}: ${cs.map((c) => `${c.path || "$"} ${arrow(c)}`).join(", ")}`,
    },
  ];
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

interface FieldChange {
  field: string;
  oldValue: unknown;
  newValue: unknown;
}

/** One changed field of a rule: its rule_changes rows and its phrase of the summary, decided together. */
interface FieldDiff {
  rows: FieldChange[];
  phrase: string;
}

/** Every changed field of a rule, in summary order. */
function diffRuleFields(before: AuditRule, after: AuditRule): FieldDiff[] {
  const out: FieldDiff[] = [];
  const plain = (field: keyof AuditRule, phrase: (b: unknown, a: unknown) => string) => {
    if (!sameValue(before[field], after[field])) {
      out.push({
        rows: [{ field, oldValue: before[field], newValue: after[field] }],
        phrase: phrase(before[field], after[field]),
      });
    }
  };
  plain("groupName", (b, a) => `name ${arrow({ oldValue: b, newValue: a })}`);
  plain("percentagePass", (b, a) => `pass ${percent(b)} → ${percent(a)}`);
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
  plain("environment", (b, a) => `environment ${arrow({ oldValue: b, newValue: a })}`);
  plain("enabledEnvironments", (b, a) => describeEnvironments(b, a));
  plain("salt", () => "salt changed");
  out.push(...pathField("rollouts", before.rollouts, after.rollouts));
  for (const key of unknownKeys(before, after)) out.push(...pathField(key, before[key], after[key]));
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

type ParsedJson = { ok: true; value: unknown } | { ok: false };

/** Parsed once; the diff reads the result in both the rows and the phrase. */
function parseJson(text: string | undefined): ParsedJson {
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
