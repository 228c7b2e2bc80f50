// Named parameters for `flagtrail sql --param name=value`, and the same form printed under each query
// of the compliance report, so a reader can paste them and re-run the query. One codec both ways:
// an integer literal binds as an integer (epoch-ms bounds compare with INTEGER columns), `NULL` binds
// SQL NULL, anything else binds as text (JSON lists stay text; the queries read them with json_each).
import { SettingError } from "../errors.ts";
import { shellQuote } from "../text/shellWord.ts";

const PARAM = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
const INTEGER = /^-?\d{1,19}$/;
const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };

/** A BigInt, which SQLite binds as INTEGER (a JS number binds as REAL: typeof 'real', 5 / 2 = 2.5). */
function integerOf(value: string): bigint | null {
  if (!INTEGER.test(value)) return null;
  const n = BigInt(value);
  return n >= INT64.min && n <= INT64.max ? n : null;
}

export function parseSqlParams(list: readonly string[]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const item of list) {
    const match = PARAM.exec(item);
    if (!match)
      throw new SettingError(
        "query parameter",
        `A query parameter must be name=value, got ${JSON.stringify(item)}.`,
      );
    const [, name, value] = match as unknown as [string, string, string];
    params[name] = value === "NULL" ? null : (integerOf(value) ?? value);
  }
  return params;
}

function paramText(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  return String(value);
}

/** `--param 'name=value'` for each parameter, shell-quoted, one per line. */
export function formatSqlParams(params: Record<string, unknown>): string {
  return Object.entries(params)
    .map(([name, value]) => `--param ${shellQuote(`${name}=${paramText(value)}`)}`)
    .join(" \\\n  ");
}
