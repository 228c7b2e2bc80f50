// Targeting rules in the audit log's shape (`changes.rules.old/new`) and the edits the generator
// applies to them — one per diff case the reports must render: pass percentage, condition added /
// removed / changed, return value, environments, rule added / removed / reordered, resalt.
import type { AuditRule } from "../../api/schemas.ts";
import type { Prng } from "../prng.ts";

export const RULE_EDITS = [
  "passPercentage",
  "conditionAdded",
  "conditionRemoved",
  "conditionChanged",
  "returnValue",
  "environment",
  "ruleAdded",
  "ruleRemoved",
  "ruleReordered",
  "resalt",
] as const;
export type RuleEdit = (typeof RULE_EDITS)[number];

const ENVIRONMENTS = ["production", "staging", "development"] as const;
const GROUP_NAMES = [
  "Employees",
  "Beta testers",
  "US only",
  "EU rollout",
  "iOS 17+",
  "Power users",
  "Everyone",
];
const COUNTRIES = ["US", "CA", "GB", "DE", "FR", "JP", "BR", "IN"];
const COLORS = ["blue", "green", "orange", "purple"];

const HEX_CODES = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
const MAX_CONDITIONS = 4;
const MAX_VALUES = 4;

type Condition = NonNullable<AuditRule["conditionJSON"]>[number];

function salt(prng: Prng): string {
  const codes = new Array<number>(36);
  for (let i = 0; i < 36; i++) {
    codes[i] = i === 8 || i === 13 || i === 18 || i === 23 ? 45 : HEX_CODES[prng.nextUint32() & 15]!;
  }
  return String.fromCharCode(...codes);
}

function condition(prng: Prng): Condition {
  const conditionType = prng.int(0, 20);
  const value =
    conditionType % 3 === 0
      ? [prng.pick(COUNTRIES), prng.pick(COUNTRIES)]
      : conditionType % 3 === 1
        ? [`${prng.int(1, 9)}.${prng.int(0, 20)}.0`]
        : [`user_${prng.alphanumeric(6)}@example.com`];
  return { conditionType, operator: prng.int(0, 15), value, extraConfig: {} };
}

function returnValue(prng: Prng, kind: "dynamic_config" | "gate"): string {
  if (kind === "gate") return "true";
  return JSON.stringify({ color: prng.pick(COLORS), limit: prng.int(1, 50), enabled: prng.chance(0.7) });
}

export function newRule(prng: Prng, kind: "dynamic_config" | "gate"): AuditRule {
  return {
    groupName: prng.pick(GROUP_NAMES),
    percentagePass: prng.pick([0, 5, 10, 25, 50, 100]),
    conditionJSON: [condition(prng)],
    returnValueJSON: returnValue(prng, kind),
    id: prng.alphanumeric(20),
    salt: salt(prng),
    environment: "all",
    rollouts: [],
    enabledEnvironments: ENVIRONMENTS.filter(() => prng.chance(0.6)),
  };
}

function withRule(rules: readonly AuditRule[], index: number, rule: AuditRule): AuditRule[] {
  const next = rules.slice();
  next[index] = rule;
  return next;
}

/** The rules after one edit, or null when the edit does not apply (e.g. removing the only rule). */
export function applyRuleEdit(
  prng: Prng,
  rules: readonly AuditRule[],
  edit: RuleEdit,
  kind: "dynamic_config" | "gate",
): { rules: AuditRule[]; changeLog: string } | null {
  const index = rules.length > 0 ? prng.int(0, rules.length - 1) : -1;
  const target = rules[index];
  const replace = (rule: AuditRule) => withRule(rules, index, rule);
  switch (edit) {
    case "ruleAdded": {
      const rule = newRule(prng, kind);
      return { rules: [...rules, rule], changeLog: `Added rule ${rule.groupName}` };
    }
    case "ruleRemoved":
      if (target === undefined || rules.length < 2) return null;
      return { rules: rules.filter((_, i) => i !== index), changeLog: `Removed rule ${target.groupName}` };
    case "ruleReordered": {
      if (rules.length < 2) return null;
      const next = [...rules];
      const moved = next.splice(index, 1)[0]!;
      next.splice(index === 0 ? next.length : 0, 0, moved);
      return { rules: next, changeLog: `Reordered rule ${moved.groupName}` };
    }
    case "passPercentage": {
      if (target === undefined) return null;
      let pass = prng.pick([0, 1, 5, 10, 20, 33.3, 50, 75, 100]);
      if (pass === target.percentagePass) pass = pass === 100 ? 50 : 100;
      return {
        rules: replace({ ...target, percentagePass: pass }),
        changeLog: `Updated pass percentage of ${target.groupName} from ${target.percentagePass}% to ${pass}%`,
      };
    }
    case "conditionAdded":
      if (target === undefined || (target.conditionJSON?.length ?? 0) >= MAX_CONDITIONS) return null;
      return {
        rules: replace({ ...target, conditionJSON: [...(target.conditionJSON ?? []), condition(prng)] }),
        changeLog: `Added a condition to ${target.groupName}`,
      };
    case "conditionRemoved": {
      const conditions = target?.conditionJSON ?? [];
      if (target === undefined || conditions.length < 2) return null;
      return {
        rules: replace({ ...target, conditionJSON: conditions.slice(0, -1) }),
        changeLog: `Removed a condition from ${target.groupName}`,
      };
    }
    case "conditionChanged": {
      const conditions = target?.conditionJSON ?? [];
      if (target === undefined || conditions.length === 0) return null;
      const at = prng.int(0, conditions.length - 1);
      const old = conditions[at]!;
      const values = old.value ?? [];
      const changed: Condition = {
        ...old,
        value:
          values.length >= MAX_VALUES
            ? [...values.slice(1), prng.pick(COUNTRIES)]
            : [...values, prng.pick(COUNTRIES)],
      };
      return {
        rules: replace({ ...target, conditionJSON: conditions.map((c, i) => (i === at ? changed : c)) }),
        changeLog: `Changed a condition of ${target.groupName}`,
      };
    }
    case "returnValue": {
      if (target === undefined || kind === "gate") return null;
      let value = returnValue(prng, kind);
      if (value === target.returnValueJSON)
        value = JSON.stringify({ color: "red", limit: 0, enabled: false });
      return {
        rules: replace({ ...target, returnValueJSON: value }),
        changeLog: `Updated the return value of ${target.groupName}`,
      };
    }
    case "environment": {
      if (target === undefined) return null;
      const env = prng.pick(ENVIRONMENTS);
      const current = target.enabledEnvironments ?? [];
      const enabled = current.includes(env) ? current.filter((e) => e !== env) : [...current, env];
      return {
        rules: replace({ ...target, enabledEnvironments: enabled }),
        changeLog: `${current.includes(env) ? "Disabled" : "Enabled"} ${env} for ${target.groupName}`,
      };
    }
    case "resalt":
      if (target === undefined) return null;
      return { rules: replace({ ...target, salt: salt(prng) }), changeLog: `Resalted ${target.groupName}` };
  }
}
