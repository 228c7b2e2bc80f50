import { describe, expect, it } from "vitest";
import { sameValue } from "../../src/diff/values.ts";
import { canonicalJson } from "../../src/hash.ts";
import { buildSimulator } from "../../src/simulator/index.ts";

const byText = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

describe("sameValue", () => {
  it("agrees with comparing canonical JSON on every pair of simulated rules", () => {
    const sim = buildSimulator({ records: 1500, seed: 5, now: Date.UTC(2024, 3, 15) });
    const rules: unknown[] = [];
    for (let pos = 0; pos < sim.store.size; pos += 1) {
      const record = JSON.parse(JSON.stringify(sim.store.render(sim.store.at(pos)!)));
      const sides = record.changes?.rules;
      if (sides) rules.push(...(sides.old ?? []), ...(sides.new ?? []));
    }
    expect(rules.length).toBeGreaterThan(200);
    let equalPairs = 0;
    // The pairs where sameValue disagrees, compared once (an expect per pair was 3,000 expect calls).
    const disagreements: { i: number; j: number | "copy"; sameValue: boolean }[] = [];
    for (let i = 0; i < rules.length; i += 1) {
      // Each rule against its neighbours and an independent copy of itself.
      const copy = JSON.parse(JSON.stringify(rules[i]));
      if (sameValue(rules[i], copy) !== true) disagreements.push({ i, j: "copy", sameValue: false });
      for (const j of [i + 1, i + 7]) {
        if (j >= rules.length) continue;
        const same = sameValue(rules[i], rules[j]);
        if (same !== byText(rules[i], rules[j])) disagreements.push({ i, j, sameValue: same });
        if (byText(rules[i], rules[j])) equalPairs += 1;
      }
    }
    expect(disagreements).toEqual([]);
    expect(equalPairs).toBeGreaterThan(0);
  });

  it("treats values as JSON does: key order, left-out values, non-finite numbers, toJSON", () => {
    const cases: [unknown, unknown][] = [
      [
        { a: 1, b: [1, 2] },
        { b: [1, 2], a: 1 },
      ],
      [{ a: 1, x: undefined }, { a: 1 }],
      [{ a: 1, f: () => 1 }, { a: 1 }],
      [{ a: 1 }, { a: 1, b: null }],
      [
        [1, undefined],
        [1, null],
      ],
      [Number.NaN, null],
      [Number.POSITIVE_INFINITY, Number.NaN],
      [0, -0],
      [1, "1"],
      [{ d: new Date(0) }, { d: "1970-01-01T00:00:00.000Z" }],
      [[1, 2], { 0: 1, 1: 2 }],
      ["a", "b"],
      [true, 1],
      [1, 2],
      [Number.NaN, 3],
      [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY],
      [[1], [1, 2]],
      [[1, undefined], [1]],
    ];
    for (const [a, b] of cases) {
      expect(sameValue(a, b), `${canonicalJson(a)} vs ${canonicalJson(b)}`).toBe(byText(a, b));
      expect(sameValue(b, a)).toBe(byText(a, b));
    }
  });
});
