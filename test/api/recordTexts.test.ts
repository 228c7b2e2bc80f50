// The records' raw texts cut from a response body must be exactly JSON.stringify's text of each parsed
// record, or not be used: every body that is not in JSON.stringify's form falls back.
import { describe, expect, it } from "vitest";
import { recordTextsOf, sameLengthAsJson } from "../../src/api/recordTexts.ts";
import { canonicalJson } from "../../src/hash.ts";
import { prepareRecords } from "../../src/records/prepare.ts";
import { makeRecord } from "../helpers/auditRecords.ts";

const records = [
  makeRecord(Date.UTC(2026, 0, 2), {
    changeLog: 'quote " backslash \\ newline \n tab \t bell \u0007 é 😀 \u2028',
    changes: { rules: { old: [], new: [{ id: "r", percentagePass: 12.5, conditionJSON: [] }] } },
    tags: ["a", "b"],
    extra: { nested: [1, -2, 0.000001, 1e21, 2 ** 60, true, false, null, {}, []] },
  }),
  makeRecord(Date.UTC(2026, 0, 3)),
  "a string item",
  42,
  null,
  [],
];

function envelope(data: string): string {
  return `{"message":"ok","data":${data},"pagination":{"itemsPerPage":1000,"pageNumber":1,"totalItems":6}}`;
}

/** The texts the store keeps for `body`'s records: the cut ones where usable, else JSON.stringify's. */
function storedTexts(body: string): { texts: string[]; cut: boolean[] } {
  const parsed = (JSON.parse(body) as { data: unknown[] }).data;
  const cuts = recordTextsOf(body, parsed.length);
  const cut = parsed.map((raw, i) => sameLengthAsJson(cuts?.[i], canonicalJson(raw)));
  const texts = parsed.map((raw, i) => (cut[i] ? cuts![i]! : JSON.stringify(raw)));
  return { texts, cut };
}

describe("recordTextsOf", () => {
  it("cuts each record's JSON.stringify text from a compact body", () => {
    const body = envelope(JSON.stringify(records));
    expect(recordTextsOf(body, records.length)).toEqual(records.map((r) => JSON.stringify(r)));
    expect(storedTexts(body).cut.every(Boolean)).toBe(true);
    expect(recordTextsOf(envelope("[]"), 0)).toEqual([]);
  });

  it("takes the last data array of the envelope, as JSON.parse does", () => {
    const body = `{"data":[1,2],"x":{"data":[3]},"data":[{"a":1}],"pagination":{}}`;
    expect(recordTextsOf(body, 1)).toEqual(['{"a":1}']);
    expect(recordTextsOf('{"data":[1],"data":null}', 1)).toBeNull();
  });

  it("gives nothing for a body JSON.stringify would write otherwise, and the store keeps JSON.stringify's text", () => {
    const compact = JSON.stringify(records[1]);
    const variants = [
      JSON.stringify(records, null, 2),
      `[ ${compact}]`,
      `[${compact.replace('"name"', '"\\u006eame"')}]`,
      `[${compact.replace('"name"', '"n\\/ame"')}]`,
      `[${compact.replace('"gate_', '"\\u0009gate_')}]`,
      `[${compact.replace('"gate_', '"\\u001Fgate_')}]`,
      `[${compact.replace('"gate_', '"\\ud83d\\ude00gate_')}]`,
      '[{"n":1.0}]',
      '[{"n":1E3}]',
      '[{"n":-0}]',
      '[{"n":1e400}]',
      '[{"b":1,"1":2}]',
    ];
    for (const data of variants) {
      const body = envelope(data);
      const count = (JSON.parse(body) as { data: unknown[] }).data.length;
      expect(recordTextsOf(body, count), data).toBeNull();
    }
    expect(recordTextsOf(envelope(JSON.stringify(records)), records.length + 1)).toBeNull();
  });

  it("a repeated key is cut but not used: the parsed record's JSON is stored", () => {
    for (const data of [
      '[{"a":1,"a":"longer"}]',
      '[{"x":{"a":[1,2],"a":[]}}]',
      '[{"a":"s","b":1,"a":"s"}]',
    ]) {
      const body = envelope(data);
      const { texts, cut } = storedTexts(body);
      expect(cut, data).toEqual([false]);
      expect(texts).toEqual([JSON.stringify((JSON.parse(body) as { data: unknown[] }).data[0])]);
    }
  });
});

describe("prepareRecords with the response body", () => {
  it("stores JSON.stringify's text of each parsed record, whatever form the body has", () => {
    const page = [records[0], records[1]];
    const compact = JSON.stringify(page);
    const repeated = compact.replace('"name":', '"name":"first","name":');
    for (const data of [compact, JSON.stringify(page, null, 1), repeated]) {
      const body = envelope(data);
      const parsed = (JSON.parse(body) as { data: unknown[] }).data;
      const stored = prepareRecords(parsed, undefined, body).map((p) =>
        p.valid ? p.columns.raw : p.rawJson,
      );
      expect(stored).toEqual(parsed.map((r) => JSON.stringify(r)));
      expect(prepareRecords(parsed)).toEqual(prepareRecords(parsed, undefined, body));
    }
  });
});
