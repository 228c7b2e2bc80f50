// docs/export.md prints the whole action type → OCSF activity table; it is compared here with the one
// table in the code (src/export/activities.ts), so the two cannot drift. On a difference the test prints
// the table the page must hold; FLAGTRAIL_WRITE_DOCS=1 writes it there.
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ACTION_TYPE_CATEGORIES } from "../../src/api/actionCategories.ts";
import { AUDIT_ACTION_TYPES } from "../../src/api/actionTypes.ts";
import { ACTION_TYPE_MAPPING, ACTIVITY_NAMES } from "../../src/export/activities.ts";

const PAGE = new URL("../../docs/export.md", import.meta.url);
const START =
  "<!-- activity-table:start (generated from src/export/activities.ts by test/export/doc.test.ts) -->";
const END = "<!-- activity-table:end -->";

function table(): string {
  const rows = AUDIT_ACTION_TYPES.map((type) => {
    const [activity, entity] = ACTION_TYPE_MAPPING[type];
    const category = ACTION_TYPE_CATEGORIES.get(type) ?? "";
    return `| \`${type}\` | ${category} | ${activity} ${ACTIVITY_NAMES[activity]} | ${300400 + activity} | ${entity} |`;
  });
  return [
    "| action type | category | activity_id | type_uid | entity.type |",
    "|---|---|---|---|---|",
    ...rows,
    `| any other | | 99 Other | 300499 | other |`,
  ].join("\n");
}

describe("docs/export.md", () => {
  it("prints the whole action type → activity table, as the code has it", () => {
    const page = readFileSync(PAGE, "utf8");
    const start = page.indexOf(START);
    const end = page.indexOf(END);
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    const expected = `${START}\n${table()}\n${END}`;
    const actual = page.slice(start, end + END.length);
    if (actual !== expected && process.env.FLAGTRAIL_WRITE_DOCS === "1") {
      writeFileSync(PAGE, page.slice(0, start) + expected + page.slice(end + END.length));
    }
    expect(actual).toBe(expected);
  });
});
