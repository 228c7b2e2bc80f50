import { describe, expect, it } from "vitest";
import { diffRecordChanges, diffRuleSets, type RuleChange } from "../../src/diff/rules.ts";
import { exampleRule } from "../report/fixtures.ts";

function diff(oldRules: unknown[], newRules: unknown[]) {
  const result = diffRecordChanges({ rules: { old: oldRules, new: newRules } });
  if (result === null) throw new Error("expected a diff");
  return result;
}

function row(changes: RuleChange[], field: string | null): RuleChange | undefined {
  return changes.find((c) => c.field === field);
}

describe("rule diff", () => {
  it("diffs the OpenAPI example: production enabled", () => {
    const oldRule = exampleRule({ enabledEnvironments: ["development", "staging"] });
    const { changes, summary } = diff([oldRule], [exampleRule()]);
    expect(summary).toBe('rule "test": environments: +production');
    expect(changes).toEqual([
      {
        ruleId: "BfGswoMDcsZ4y9Le1d9O",
        ruleName: "test",
        change: "modified",
        field: "enabledEnvironments",
        oldValue: '["development","staging"]',
        newValue: '["development","staging","production"]',
        oldPosition: 1,
        newPosition: 1,
      },
    ]);
  });

  it("writes the summary of the issue's example", () => {
    const before = exampleRule({
      groupName: "Beta users",
      percentagePass: 10,
      enabledEnvironments: ["staging"],
    });
    const after = exampleRule({
      groupName: "Beta users",
      percentagePass: 50,
      conditionJSON: [
        { conditionType: 1, operator: 0, value: ["1"], extraConfig: {} },
        { conditionType: 1, operator: 0, value: ["ios"], extraConfig: {} },
      ],
      enabledEnvironments: ["staging", "production"],
    });
    const { summary, changes } = diff([before], [after]);
    expect(summary).toBe(
      'rule "Beta users": pass 10% → 50%; condition added: type 1 op 0 ["ios"]; environments: +production',
    );
    expect(changes.map((c) => c.field)).toEqual([
      "percentagePass",
      "conditionJSON[2]",
      "enabledEnvironments",
    ]);
    expect(row(changes, "percentagePass")).toMatchObject({ oldValue: "10", newValue: "50" });
    expect(row(changes, "conditionJSON[2]")?.newValue).toBe(
      '{"conditionType":1,"operator":0,"value":["ios"],"extraConfig":{}}',
    );
  });

  it("reports an added rule with its position", () => {
    const added = exampleRule({ id: "NewRuleId00000000001", groupName: "Employees", percentagePass: 100 });
    const { changes, summary } = diff([exampleRule()], [exampleRule(), added]);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({
      ruleId: "NewRuleId00000000001",
      ruleName: "Employees",
      change: "added",
      field: null,
      oldPosition: null,
      newPosition: 2,
    });
    expect(JSON.parse(changes[0]!.newValue!)).toEqual(added);
    expect(summary).toMatch(/^rule "Employees" added at 2 \(pass 100%, condition type 1 op 0 \["1"\]/);
  });

  it("reports a removed rule", () => {
    const gone = exampleRule({ id: "GoneRuleId0000000001", groupName: "Old" });
    const { changes, summary } = diff([gone, exampleRule()], [exampleRule()]);
    expect(changes.map((c) => [c.ruleId, c.change, c.oldPosition, c.newPosition])).toEqual([
      ["GoneRuleId0000000001", "removed", 1, null],
    ]);
    expect(summary).toBe('rule "Old" removed (was 1)');
  });

  it("reports a moved rule (swap) but not rules shifted by an insertion", () => {
    const a = exampleRule({ id: "AAAAAAAAAAAAAAAAAAAA", groupName: "A" });
    const b = exampleRule({ id: "BBBBBBBBBBBBBBBBBBBB", groupName: "B" });
    const c = exampleRule({ id: "CCCCCCCCCCCCCCCCCCCC", groupName: "C" });
    const swapped = diff([a, b], [b, a]);
    expect(swapped.changes).toEqual([
      expect.objectContaining({
        ruleId: "AAAAAAAAAAAAAAAAAAAA",
        change: "moved",
        oldPosition: 1,
        newPosition: 2,
      }),
    ]);
    expect(swapped.summary).toBe('rule "A": moved 1 → 2');

    const inserted = diff([a, b], [c, a, b]);
    expect(inserted.changes.map((x) => x.change)).toEqual(["added"]);
  });

  it("reports a rule that moved and changed", () => {
    const a = exampleRule({ id: "AAAAAAAAAAAAAAAAAAAA", groupName: "A" });
    const b = exampleRule({ id: "BBBBBBBBBBBBBBBBBBBB", groupName: "B" });
    const { changes, summary } = diff([a, b], [b, { ...a, percentagePass: 5 }]);
    expect(changes.map((x) => [x.ruleId, x.change, x.field])).toEqual([
      ["AAAAAAAAAAAAAAAAAAAA", "moved", null],
      ["AAAAAAAAAAAAAAAAAAAA", "modified", "percentagePass"],
    ]);
    expect(summary).toBe('rule "A": moved 1 → 2; pass 100% → 5%');
  });

  it("reports a renamed group", () => {
    const { changes, summary } = diff([exampleRule()], [exampleRule({ groupName: "Beta users" })]);
    expect(row(changes, "groupName")).toMatchObject({ oldValue: '"test"', newValue: '"Beta users"' });
    expect(summary).toBe('rule "Beta users": name "test" → "Beta users"');
  });

  it("names a condition's type when its JSON does, and keeps the number otherwise (issue 26)", () => {
    const country = { conditionType: 18, operator: 12, value: ["JP", "BR"], extraConfig: {} };
    const first = { conditionType: 1, operator: 0, value: ["1"], extraConfig: {} };
    const named = diff(
      [exampleRule()],
      [exampleRule({ conditionJSON: [first, { ...country, type: "country" }] })],
    );
    expect(named.summary).toContain('condition added: country (type 18) op 12 ["JP","BR"]');
    expect(named.summary).not.toContain('type "country"');
    const unnamed = diff([exampleRule()], [exampleRule({ conditionJSON: [first, country] })]);
    expect(unnamed.summary).toContain('condition added: type 18 op 12 ["JP","BR"]');
  });

  it("reports a removed condition", () => {
    const { changes, summary } = diff([exampleRule()], [exampleRule({ conditionJSON: [] })]);
    expect(row(changes, "conditionJSON[1]")).toMatchObject({
      oldValue: '{"conditionType":1,"operator":0,"value":["1"],"extraConfig":{}}',
      newValue: null,
    });
    expect(summary).toBe('rule "test": condition removed: type 1 op 0 ["1"]');
  });

  it("reports each changed part of a condition", () => {
    const after = exampleRule({
      conditionJSON: [{ conditionType: 1, operator: 2, value: ["1", "2"], extraConfig: { field: "plan" } }],
    });
    const { changes, summary } = diff([exampleRule()], [after]);
    expect(changes.map((c) => [c.field, c.oldValue, c.newValue])).toEqual([
      ["conditionJSON[1].operator", "0", "2"],
      ["conditionJSON[1].value", '["1"]', '["1","2"]'],
      ["conditionJSON[1].extraConfig.field", null, '"plan"'],
    ]);
    expect(summary).toBe(
      'rule "test": condition 1 changed: op 0 → 2, value +"2", extraConfig .field +"plan"',
    );
  });

  it("reports a changed conditionType", () => {
    const after = exampleRule({
      conditionJSON: [{ conditionType: 4, operator: 0, value: ["1"], extraConfig: {} }],
    });
    const { changes, summary } = diff([exampleRule()], [after]);
    expect(changes.map((c) => [c.field, c.oldValue, c.newValue])).toEqual([
      ["conditionJSON[1].conditionType", "1", "4"],
    ]);
    expect(summary).toBe('rule "test": condition 1 changed: type 1 → 4');
  });

  it("does not report reordered conditions", () => {
    const two = [
      { conditionType: 1, operator: 0, value: ["1"], extraConfig: {} },
      { conditionType: 2, operator: 0, value: ["x"], extraConfig: {} },
    ];
    const { changes, summary } = diff(
      [exampleRule({ conditionJSON: two })],
      [exampleRule({ conditionJSON: [...two].reverse() })],
    );
    expect(changes).toEqual([]);
    expect(summary).toBe("rules unchanged");
  });

  it("reports JSON-path changes of returnValueJSON", () => {
    const before = exampleRule({ returnValueJSON: '{"color":"red","size":2,"tags":["a"]}' });
    const after = exampleRule({ returnValueJSON: '{"color":"blue","tags":["a","b"],"new key":true}' });
    const { changes, summary } = diff([before], [after]);
    expect(changes.map((c) => [c.field, c.oldValue, c.newValue])).toEqual([
      ["returnValueJSON $.color", '"red"', '"blue"'],
      ["returnValueJSON $.size", "2", null],
      ["returnValueJSON $.tags[1]", null, '"b"'],
      ['returnValueJSON $["new key"]', null, "true"],
    ]);
    expect(summary).toBe(
      'rule "test": return value: $.color "red" → "blue", $.size -2, $.tags[1] +"b", $["new key"] +true',
    );
  });

  it("reports a scalar returnValueJSON change at $", () => {
    const { changes, summary } = diff([exampleRule()], [exampleRule({ returnValueJSON: "false" })]);
    expect(changes.map((c) => [c.field, c.oldValue, c.newValue])).toEqual([
      ["returnValueJSON $", "true", "false"],
    ]);
    expect(summary).toBe('rule "test": return value: $ true → false');
  });

  it("falls back to a text diff when returnValueJSON is not JSON", () => {
    const { changes, summary } = diff(
      [exampleRule({ returnValueJSON: "hello old world" })],
      [exampleRule({ returnValueJSON: "hello new world" })],
    );
    expect(changes.map((c) => [c.field, c.oldValue, c.newValue])).toEqual([
      ["returnValueJSON", '"hello old world"', '"hello new world"'],
    ]);
    expect(summary).toBe('rule "test": return value text: "hello [-old-]{+new+} world"');
  });

  it("reports environment, disabled environments, salt and rollouts", () => {
    const after = exampleRule({
      environment: "staging",
      enabledEnvironments: ["development", "production", "qa"],
      salt: "00000000-0000-0000-0000-000000000000",
      rollouts: [{ percent: 20, at: 1700000000000 }],
    });
    const { changes, summary } = diff([exampleRule()], [after]);
    expect(changes.map((c) => c.field)).toEqual([
      "environment",
      "enabledEnvironments",
      "salt",
      "rollouts[0]",
    ]);
    expect(row(changes, "salt")).toMatchObject({
      oldValue: '"8df8n90p-d9bj-1l23-c9bl-1m022n9bzps8"',
      newValue: '"00000000-0000-0000-0000-000000000000"',
    });
    expect(summary).toBe(
      'rule "test": environment "production" → "staging"; environments: +qa -staging; salt changed; ' +
        'rollouts: [0] +{"percent":20,"at":1700000000000}',
    );
  });

  it("diffs fields it does not know instead of ignoring them", () => {
    const before = exampleRule({ passPercentageOverride: { a: 1 } });
    const after = exampleRule({
      passPercentageOverride: { a: 2 },
      conditionJSON: [{ conditionType: 1, operator: 0, value: ["1"], extraConfig: {}, negate: true }],
    });
    const { changes, summary } = diff([before], [after]);
    expect(changes.map((c) => [c.field, c.oldValue, c.newValue])).toEqual([
      ["conditionJSON[1].negate", null, "true"],
      ["passPercentageOverride.a", "1", "2"],
    ]);
    expect(summary).toBe(
      'rule "test": condition 1 changed: negate $ +true; passPercentageOverride: .a 1 → 2',
    );
  });

  it("diffs unknown fields found on one side only, in name order whichever side has them", () => {
    const before = exampleRule({ zeta: 1, alpha: "x" });
    const after = exampleRule({ mid: [1], alpha: "x" });
    const { changes } = diff([before], [after]);
    expect(changes.map((c) => [c.field, c.oldValue, c.newValue])).toEqual([
      ["mid", null, "[1]"],
      ["zeta", "1", null],
    ]);
  });

  it("returns null for records without rules and diffs a malformed shape opaquely", () => {
    expect(diffRecordChanges({})).toBeNull();
    expect(diffRecordChanges('{"rules":null}')).toBeNull();
    const opaque = diffRuleSets({ old: "x", new: [1] });
    expect(opaque.changes).toEqual([
      expect.objectContaining({ ruleId: "", field: "rules", oldValue: '"x"', newValue: "[1]" }),
    ]);
  });

  it("treats the same JSON formatted differently as no change, in the rows and the summary", () => {
    const { changes, summary } = diff(
      [exampleRule({ returnValueJSON: '{"a":1,"b":[1,2]}' })],
      [exampleRule({ returnValueJSON: '{ "b": [1, 2],\n  "a": 1 }' })],
    );
    expect(changes).toEqual([]);
    expect(summary).toBe("rules unchanged");
  });

  it("shows the changed part of a long text return value, not just its unchanged start", () => {
    const before = "Welcome to our store, please enjoy the spring sale on all items and free shipping today";
    const after = "Welcome to our store, please enjoy the spring sale on all items and paid shipping today";
    const { changes, summary } = diff(
      [exampleRule({ returnValueJSON: before })],
      [exampleRule({ returnValueJSON: after })],
    );
    expect(changes.map((c) => c.field)).toEqual(["returnValueJSON"]);
    expect(summary).toBe(
      'rule "test": return value text: "…le on all items and [-free-]{+paid+} shipping today"',
    );
  });

  it("shows a change at the end of a long condition value", () => {
    const long = "a".repeat(100);
    const { summary } = diff(
      [
        exampleRule({
          conditionJSON: [{ conditionType: 1, operator: 0, value: [`${long}1`], extraConfig: {} }],
        }),
      ],
      [
        exampleRule({
          conditionJSON: [{ conditionType: 1, operator: 0, value: [`${long}2`], extraConfig: {} }],
        }),
      ],
    );
    expect(summary).toContain('a2"');
    expect(summary).toContain('a1"');
  });

  it("diffs a malformed rule generically and keeps the diff of the valid rules next to it", () => {
    const valid = exampleRule({ id: "R1", groupName: "valid", percentagePass: 10 });
    const noId = { groupName: "no id", percentagePass: 5 };
    const badType = exampleRule({ id: "R3", groupName: "bad", returnValueJSON: { not: "a string" } });
    const { changes, summary } = diff(
      [valid, noId, badType],
      [
        { ...valid, percentagePass: 20 },
        { ...noId, percentagePass: 6 },
        { ...badType, returnValueJSON: { not: "x" } },
      ],
    );
    expect(changes.map((c) => [c.ruleId, c.field, c.oldValue, c.newValue])).toEqual([
      ["R1", "percentagePass", "10", "20"],
      ["", "percentagePass", "5", "6"],
      ["R3", "returnValueJSON.not", '"a string"', '"x"'],
    ]);
    expect(summary).toBe(
      'rule "valid": pass 10% → 20%; rule "no id": percentagePass: $ 5 → 6; rule "bad": returnValueJSON: .not "a string" → "x"',
    );
  });

  it("pairs rules sharing an id by content first and says the id is duplicated", () => {
    const g = exampleRule({ id: "R1", groupName: "g" });
    const dup = exampleRule({ id: "R1", groupName: "dup" });
    const { changes, summary } = diff([g, dup], [dup]);
    expect(changes.map((c) => [c.change, c.ruleName, c.oldPosition, c.newPosition])).toEqual([
      ["removed", "g", 1, null],
    ]);
    expect(summary).toBe('rule "g" (duplicate id R1) removed (was 1)');
  });

  it("reports enabledEnvironments from null", () => {
    const { changes, summary } = diff(
      [exampleRule({ enabledEnvironments: null })],
      [exampleRule({ enabledEnvironments: ["production"] })],
    );
    expect(changes.map((c) => [c.field, c.oldValue, c.newValue])).toEqual([
      ["enabledEnvironments", "null", '["production"]'],
    ]);
    expect(summary).toBe('rule "test": environments: null → ["production"]');
  });
});
