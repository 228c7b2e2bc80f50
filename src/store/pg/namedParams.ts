// `@name` parameters (`flagtrail sql --param`, the report's printed queries) as PostgreSQL's `$n`. String
// literals, quoted identifiers, dollar-quoted bodies and comments are copied; `@@` / `@>` stay operators.
import { UsageError } from "../../errors.ts";

/** A literal, quoted identifier, dollar-quoted body or comment at the start of `rest`, whole. */
const OPAQUE =
  /^(?:[eE]'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\/\*[\s\S]*?\*\/|(\$[A-Za-z_]*\$)[\s\S]*?\1)/;
const PLACEHOLDER = /^@([A-Za-z_][A-Za-z0-9_]*)/;

export interface PositionalQuery {
  text: string;
  values: unknown[];
}

/** `sql` with each `@name` as `$n` (one n per name) and the values in that order; a missing name is a UsageError. */
export function toPositional(sql: string, params: Record<string, unknown>): PositionalQuery {
  const order = new Map<string, number>();
  const values: unknown[] = [];
  let text = "";
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i);
    const opaque = OPAQUE.exec(rest);
    if (opaque) {
      text += opaque[0];
      i += opaque[0].length;
      continue;
    }
    const placeholder = /[\w@]/.test(sql[i - 1] ?? "") ? null : PLACEHOLDER.exec(rest);
    if (!placeholder) {
      text += sql[i];
      i += 1;
      continue;
    }
    const name = placeholder[1]!;
    if (!Object.hasOwn(params, name)) throw new UsageError(`SQL error: missing named parameter "${name}"`);
    let n = order.get(name);
    if (n === undefined) {
      values.push(params[name]);
      n = values.length;
      order.set(name, n);
    }
    text += `$${n}`;
    i += placeholder[0].length;
  }
  return { text, values };
}
