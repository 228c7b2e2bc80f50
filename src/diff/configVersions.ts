// Field-level diff of a dynamic config version against the one before it: defaultValue by JSON path,
// rules through the rule diff (console rules carry other field names than audit rules: those are
// diffed generically there), every other field as one value. Metadata that changes with every version
// (number, time, modifier) and defaultValueJson5 (the text of defaultValue) are not changes.
import { diffRuleSets } from "./rules.ts";
import { encodeValue, pathChanges, sameValue } from "./values.ts";

export interface VersionFieldChange {
  field: string;
  /** `$.a.b` under defaultValue, `rule <id> <field>` for rules, null for a whole field. */
  path: string | null;
  /** added | removed | changed; rules: added | removed | modified | moved */
  change: string;
  oldValue: string | null;
  newValue: string | null;
}

const NOT_CHANGES = new Set([
  "version",
  "lastModifiedTime",
  "lastModifierID",
  "lastModifierName",
  "lastModifierEmail",
  "defaultValueJson5",
]);

const kindOf = (oldValue: unknown, newValue: unknown) =>
  oldValue === undefined ? "added" : newValue === undefined ? "removed" : "changed";

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** The changes from `previous` to `next` (two raw version records), in field order of `next`. */
export function diffConfigVersions(previous: unknown, next: unknown): VersionFieldChange[] {
  const before = asObject(previous);
  const after = asObject(next);
  const fields = [...new Set([...Object.keys(after), ...Object.keys(before)])];
  const changes: VersionFieldChange[] = [];
  for (const field of fields) {
    if (NOT_CHANGES.has(field) || sameValue(before[field], after[field])) continue;
    if (field === "defaultValue") {
      for (const c of pathChanges(before[field] ?? {}, after[field] ?? {})) {
        changes.push({
          field,
          path: `$${c.path}`,
          change: kindOf(c.oldValue, c.newValue),
          oldValue: encodeValue(c.oldValue),
          newValue: encodeValue(c.newValue),
        });
      }
    } else if (field === "rules") {
      const rules = { old: before[field] ?? [], new: after[field] ?? [] };
      for (const c of diffRuleSets(rules, false).changes) {
        changes.push({
          field,
          path: `rule ${c.ruleId}${c.field === null ? "" : ` ${c.field}`}`,
          change: c.change,
          oldValue: c.oldValue,
          newValue: c.newValue,
        });
      }
    } else {
      changes.push({
        field,
        path: null,
        change: kindOf(before[field], after[field]),
        oldValue: encodeValue(before[field]),
        newValue: encodeValue(after[field]),
      });
    }
  }
  return changes;
}
