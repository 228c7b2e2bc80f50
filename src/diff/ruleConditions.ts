// The conditions of a rule edit: conditions have no id, so they are paired first (pairConditions), then
// each pair's changed parts diffed and each condition described for the summary (src/diff/ruleFields.ts).
import type { AuditCondition } from "../api/schemas.ts";
import type { FieldChange, FieldDiff } from "./ruleFields.ts";
import { arrow, listDelta, pathChanges, sameValue, shortValue } from "./values.ts";

const KNOWN_CONDITION_FIELDS = ["conditionType", "operator", "value", "extraConfig"] as const;

/** The changed parts of a condition paired with its earlier version. */
export function diffCondition(
  before: AuditCondition,
  after: AuditCondition,
  prefix: string,
): FieldDiff | null {
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
export function pairConditions(
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

export function describeCondition(condition: AuditCondition): string {
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
