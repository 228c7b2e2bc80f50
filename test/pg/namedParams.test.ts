// `@name` placeholders as PostgreSQL's `$n`: only placeholders are rewritten.
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.ts";
import { toPositional } from "../../src/store/pg/namedParams.ts";

describe("toPositional", () => {
  it("numbers each name once, in order of first use, and orders the values to match", () => {
    expect(toPositional("SELECT @b, @a, @b::json", { a: 1, b: "x", unused: 3 })).toEqual({
      text: "SELECT $1, $2, $1::json",
      values: ["x", 1],
    });
  });

  it("leaves literals, quoted identifiers, dollar quotes, comments and operators alone", () => {
    const sql = `SELECT '@a', E'\\'@a', "@a", $q$ @a $q$, doc @@ to_tsquery('x'), j @> '{}' -- @a
/* @a */ FROM t WHERE x = @a`;
    const { text, values } = toPositional(sql, { a: 5 });
    expect(text).toBe(sql.replace("x = @a", "x = $1"));
    expect(values).toEqual([5]);
  });

  it("refuses a name with no value as the user's error", () => {
    expect(() => toPositional("SELECT @missing", {})).toThrow(UsageError);
    expect(() => toPositional("SELECT @missing", {})).toThrow(/missing named parameter "missing"/);
  });
});
