// The hand-written checks of src/api/fastParse.ts must say what zod says, for every field given every
// kind of odd value: valid or not, the same output (a rule's JSON text, key order included; a record's
// fields), and on failure zod's own issues.
import { describe, expect, it } from "vitest";
import { parseAuditLogRecord, parseAuditRule } from "../../src/api/fastParse.ts";
import { auditLogRecordSchema, auditRuleSchema } from "../../src/api/schemas.ts";
import { makeRecord } from "../helpers/auditRecords.ts";

/** JSON text, or what stops it (an object whose prototype is a Date instance). */
function jsonOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    return `throws ${String(error)}`;
  }
}

class Box {
  a = 1;
}

/** One of every kind of value a field might hold (fresh each call: some are objects). */
function oddValues(): unknown[] {
  return [
    undefined,
    null,
    "",
    "x",
    0,
    -3,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    2 ** 60,
    true,
    [],
    ["a", "b"],
    [1, "a"],
    [{ conditionType: 1 }],
    {},
    { a: 1, b: [1] },
    Object.create(null),
    { constructor: "x" },
    JSON.parse('{"__proto__": {"rules": {"old": [], "new": []}, "updatedBy": "sneaky"}}'),
    new Date(0),
    new Box(),
  ];
}

const rule = () => ({
  groupName: "Beta",
  percentagePass: 50,
  conditionJSON: [
    { value: ["ios"], conditionType: 1, operator: 0, extraConfig: {}, type: "os" },
    { conditionType: 2, operator: 3, value: ["1.0"] },
  ],
  returnValueJSON: '{"a":1}',
  id: "rule1",
  salt: "s",
  extra: { z: 1 },
  environment: null,
  rollouts: [],
  enabledEnvironments: ["production"],
});

const record = () =>
  makeRecord(Date.UTC(2026, 0, 2), {
    changes: { rules: { old: [rule()], new: [rule()] } },
    tags: ["t"],
    targetAppIDs: ["app"],
  });

/** Every variant of `base()` with one field (or a condition's field) set to one odd value, or removed. */
function variants(base: () => Record<string, unknown>, fields: readonly string[]): unknown[] {
  const out: unknown[] = [base()];
  for (const field of fields) {
    const removed = base();
    delete removed[field];
    out.push(removed);
    for (const value of oddValues()) out.push({ ...base(), [field]: value });
  }
  for (const value of oddValues()) out.push(value);
  return out;
}

const RECORD_FIELDS = [
  "id",
  "name",
  "changeLog",
  "actionType",
  "date",
  "time",
  "updatedBy",
  "updatedByUserID",
  "modifierEmail",
  "changes",
  "tags",
  "targetAppIDs",
  "__proto__",
  "constructor",
] as const;

describe("the hand-written checks know every field of the schemas", () => {
  // A field added to a schema fails here until src/api/fastParse.ts checks it and it is listed above:
  // the comparisons below only try the fields they list.
  it("lists every field of the record, rule and condition schemas", () => {
    const listed = (fields: readonly string[]) =>
      fields.filter((f) => f !== "__proto__" && f !== "constructor");
    expect(Object.keys(auditLogRecordSchema.shape).sort()).toEqual(listed(RECORD_FIELDS).sort());
    expect(Object.keys(auditRuleSchema.shape).sort()).toEqual(
      listed(RULE_FIELDS)
        .filter((f) => f !== "extra")
        .sort(),
    );
    const condition = auditRuleSchema.shape.conditionJSON.unwrap().element;
    expect(Object.keys(condition.shape).sort()).toEqual(
      listed(CONDITION_FIELDS)
        .filter((f) => f !== "type")
        .sort(),
    );
  });
});

describe("parseAuditLogRecord", () => {
  it("accepts and rejects what auditLogRecordSchema does, with the same fields and issues", () => {
    let valid = 0;
    for (const raw of variants(record, RECORD_FIELDS)) {
      const fast = parseAuditLogRecord(raw);
      const zod = auditLogRecordSchema.safeParse(raw);
      expect(fast.success).toBe(zod.success);
      if (!fast.success || !zod.success) {
        expect(fast.error?.issues).toEqual(zod.error?.issues);
        continue;
      }
      valid += 1;
      for (const field of RECORD_FIELDS) {
        expect(jsonOf(fast.data[field]), field).toBe(jsonOf(zod.data[field]));
      }
      const rulesIn = (data: { changes?: unknown }) =>
        data.changes !== null && typeof data.changes === "object" && "rules" in data.changes;
      expect(rulesIn(fast.data)).toBe(rulesIn(zod.data));
    }
    // Not a vacuous comparison: many variants are valid, many are not.
    expect(valid).toBeGreaterThan(50);
  });
});

const RULE_FIELDS = [
  "id",
  "groupName",
  "percentagePass",
  "conditionJSON",
  "returnValueJSON",
  "salt",
  "environment",
  "rollouts",
  "enabledEnvironments",
  "extra",
  "__proto__",
  "constructor",
] as const;
const CONDITION_FIELDS = ["conditionType", "operator", "value", "extraConfig", "type", "__proto__"];

describe("parseAuditRule", () => {
  it("gives what auditRuleSchema does, key order included, or null when it fails", () => {
    const withCondition = (field: string, value: unknown, drop: boolean) => () => {
      const r = rule();
      const condition: Record<string, unknown> = r.conditionJSON[0]!;
      if (drop) delete condition[field];
      else condition[field] = value;
      return r;
    };
    const cases = [
      ...variants(rule, RULE_FIELDS),
      ...CONDITION_FIELDS.flatMap((field) => [
        withCondition(field, undefined, true)(),
        ...oddValues().map((value) => withCondition(field, value, false)()),
      ]),
    ];
    let valid = 0;
    for (const raw of cases) {
      const zod = auditRuleSchema.safeParse(raw);
      const fast = parseAuditRule(raw);
      expect(fast === null).toBe(!zod.success);
      if (zod.success) {
        valid += 1;
        expect(jsonOf(fast)).toBe(jsonOf(zod.data));
        expect(Object.getPrototypeOf(fast)).toBe(Object.getPrototypeOf(zod.data));
      }
    }
    expect(valid).toBeGreaterThan(50);
  });
});
