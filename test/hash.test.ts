import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson, hexDigestsEqual } from "../src/hash.ts";
import { buildSimulator } from "../src/simulator/index.ts";

/** The definition every stored record_hash was computed with: JSON.stringify of a key-sorted copy. */
function reference(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) out[key] = sortKeys((v as Record<string, unknown>)[key]);
      return out;
    }
    return v;
  };
  return JSON.stringify(sortKeys(value));
}

describe("canonicalJson", () => {
  it("writes exactly what the original definition wrote, for every simulated record", () => {
    const sim = buildSimulator({
      records: 3000,
      seed: 11,
      now: Date.UTC(2024, 3, 15),
      faults: { malformedRate: 0.1 },
    });
    // Every record's text against the reference's, compared as one array (not 3,000 expect calls).
    const written: string[] = [];
    const expected: string[] = [];
    for (let pos = 0; pos < sim.store.size; pos += 1) {
      const record = JSON.parse(JSON.stringify(sim.store.render(sim.store.at(pos)!)));
      written.push(canonicalJson(record));
      expected.push(reference(record));
    }
    expect(written).toEqual(expected);
  });

  it("orders integer-like keys as objects do, and leaves out what JSON leaves out", () => {
    const odd = {
      b: 1,
      "10": [1, undefined, () => 1, { z: null, a: 'é\u0000"' }],
      "9": { "2": 0, "01": 1, x: undefined },
      a: -0,
      n: 1e21,
    };
    expect(canonicalJson(odd)).toBe(reference(odd));
    expect(canonicalJson(null)).toBe("null");
    expect(canonicalJson([])).toBe("[]");
    expect(canonicalJson({})).toBe("{}");
  });
});

describe("hexDigestsEqual", () => {
  const digest = createHmac("sha256", "k").update("head").digest("hex");

  it("takes the same digest, in either case, and refuses another", () => {
    expect(hexDigestsEqual(digest, digest)).toBe(true);
    expect(hexDigestsEqual(digest, digest.toUpperCase())).toBe(true);
    expect(hexDigestsEqual(digest, digest.slice(0, 62))).toBe(false);
  });

  it("refuses a text that only begins with the digest (hex decoding stops at the first non-hex character)", () => {
    for (const tail of ["zz", "z", "0", " ", "\n", "0x"])
      expect(hexDigestsEqual(digest, digest + tail)).toBe(false);
    expect(hexDigestsEqual(digest, `${digest.slice(0, 10)}zz${digest.slice(10)}`)).toBe(false);
  });
});
