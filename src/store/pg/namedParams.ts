// `@name` parameters (`flagtrail sql --param`, the report's printed queries) as PostgreSQL's `$n`. String
// literals, quoted identifiers, dollar-quoted bodies and comments are copied; `@@` / `@>` stay operators.
import { sqlUsageError } from "../../errors.ts";

/** A literal, quoted identifier, dollar-quoted body or comment, copied whole. */
const OPAQUE =
  /[eE]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\/\*[\s\S]*?\*\/|(\$[A-Za-z_]*\$)[\s\S]*?\1/;
/** OPAQUE, else `@name` not right after a word character or `@` (the name: group 2). */
const TOKEN = new RegExp(`${OPAQUE.source}|(?<![\\w@])@([A-Za-z_][A-Za-z0-9_]*)`, "g");

/** `sql` with each `@name` as `$n` (one n per name) and the values in that order; a missing name is a UsageError. */
export function toPositional(sql: string, params: Record<string, unknown>) {
  const order = new Map<string, number>();
  const values: unknown[] = [];
  const text = sql.replace(TOKEN, (token, _tag, name: string | undefined) => {
    if (name === undefined) return token;
    if (!Object.hasOwn(params, name)) throw sqlUsageError(`missing named parameter "${name}"`);
    let n = order.get(name);
    if (n === undefined) {
      values.push(params[name]);
      n = values.length;
      order.set(name, n);
    }
    return `$${n}`;
  });
  return { text, values };
}
