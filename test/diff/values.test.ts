import microdiff from "microdiff";
import { describe, expect, it } from "vitest";
import { parsedLike, pathChanges, pathSuffix, sameValue } from "../../src/diff/values.ts";
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

/** pathChanges as it was written over microdiff 1.5, the reference its own walk must match change for change. */
function viaMicrodiff(oldValue: unknown, newValue: unknown) {
  if (sameValue(oldValue, newValue)) return [];
  const container = (v: unknown) => v !== null && typeof v === "object";
  if (container(oldValue) && container(newValue) && Array.isArray(oldValue) === Array.isArray(newValue)) {
    return microdiff(oldValue as Record<string, unknown>, newValue as Record<string, unknown>).map((d) => ({
      path: pathSuffix(d.path),
      oldValue: d.type === "CREATE" ? undefined : d.oldValue,
      newValue: d.type === "REMOVE" ? undefined : d.value,
    }));
  }
  return [{ path: "", oldValue, newValue }];
}

/** A small random JSON value: few keys and values, so that two draws share paths and often differ in part. */
function randomJson(next: () => number, depth = 0): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const kind = depth > 3 ? pick(["scalar"]) : pick(["scalar", "scalar", "array", "object", "object"]);
  if (kind === "array")
    return Array.from({ length: Math.floor(next() * 4) }, () => randomJson(next, depth + 1));
  if (kind === "object") {
    const keys = ["a", "b", "0", "two words", "x-y", "_c"];
    const out: Record<string, unknown> = {};
    for (const key of keys) if (next() < 0.4) out[key] = randomJson(next, depth + 1);
    return out;
  }
  return pick([null, 0, 1, -1.5, "", "0", "1", "a", "null", true, false, [], {}]);
}

describe("pathChanges", () => {
  it("gives microdiff's changes, paths and order on random JSON pairs, and on its odd cases", () => {
    let seed = 42;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pairs: [unknown, unknown][] = [
      [{ a: null }, { a: {} }],
      [{ a: {} }, { a: null }],
      [{ a: [] }, { a: {} }],
      [{ a: [1, 2] }, { a: "1,2" }],
      [
        [1, [2, { b: 3 }]],
        [1, [2, { b: 4, c: 5 }], 6],
      ],
      [
        { "0": 1, "two words": { x: 1 } },
        { "0": 2, "two words": { x: 2 } },
      ],
      [{ a: 1 }, { a: 1, toString: 2 }],
    ];
    for (let i = 0; i < 3_000; i += 1) {
      const a = randomJson(next);
      // Half the pairs: the second a changed copy of the first, so that most paths are shared.
      const b =
        i % 2 === 0
          ? randomJson(next)
          : JSON.parse(JSON.stringify(a), (_k, v) => (next() < 0.1 ? randomJson(next, 3) : v));
      pairs.push([a, b]);
    }
    const differing = pairs.filter(([a, b]) => !sameValue(a, b)).length;
    expect(differing).toBeGreaterThan(1_000);
    const mismatches = pairs.filter(
      ([a, b]) => JSON.stringify(pathChanges(a, b)) !== JSON.stringify(viaMicrodiff(a, b)),
    );
    expect(mismatches.slice(0, 3)).toEqual([]);
    // Undefined sides (added, removed) survive JSON.stringify as absent keys: compared as values too.
    for (const [a, b] of pairs.slice(0, 200)) expect(pathChanges(a, b)).toEqual(viaMicrodiff(a, b));
  });
});

describe("parsedLike", () => {
  it("holds for what JSON.parse gives and for nothing its text would give back otherwise", () => {
    const parsed = JSON.parse('{"a":[1,"x",true,null,{"b":-1.5,"__proto__":{}}],"toJSON":1,"":{}}');
    expect([parsed, [], {}, "s", 0, null].map(parsedLike)).toEqual([true, true, true, true, true, true]);
    const notParsed: unknown[] = [
      { a: undefined },
      [undefined],
      -0,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      new Date(0),
      // biome-ignore lint/suspicious/noSparseArray: a hole, which JSON writes as null
      [1, , 3],
      Object.assign([1], { extra: 2 }),
      Object.create({ inherited: 1 }),
      { f: () => 1 },
      { toJSON: () => "x" },
      Object.create(null),
      1n,
      [{ deep: [{ deeper: undefined }] }],
    ];
    expect(notParsed.map((value, index) => [index, parsedLike(value)])).toEqual(
      notParsed.map((_, index) => [index, false]),
    );
  });
});
