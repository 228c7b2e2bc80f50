// The queries a compliance Markdown prints under its sections (src/report/sections/markdown.ts): each
// once, as the one text that runs on either engine, with the `--param` arguments of `flagtrail sql` after it.
import { parseSqlParams } from "../../src/sql/params.ts";

export interface PrintedQuery {
  sql: string;
  params: Record<string, unknown>;
}

const BLOCK = /```sql\n([\s\S]*?)\n```(?:\n\nParameters[^\n]*\n\n```sh\n([\s\S]*?)\n```)?/g;

export function printedQueries(markdown: string): PrintedQuery[] {
  return [...markdown.matchAll(BLOCK)].map(([, sql, shell]) => ({
    sql: sql!,
    // Undo the shell quoting exactly as a shell would for '…' with '\'' escapes.
    params: parseSqlParams(
      [...(shell ?? "").matchAll(/--param '((?:[^']|'\\'')*)'/g)].map((m) => m[1]!.replaceAll("'\\''", "'")),
    ),
  }));
}
