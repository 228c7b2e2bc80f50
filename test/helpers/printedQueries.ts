// The queries a compliance Markdown prints under its sections (src/report/sections/markdown.ts): each in
// both dialects, with the `--param` arguments of `flagtrail sql` after them.
import { parseSqlParams } from "../../src/sql/params.ts";

export interface PrintedQuery {
  sqlite: string;
  postgres: string;
  params: Record<string, unknown>;
}

const BLOCK =
  /SQLite:\n\n```sql\n([\s\S]*?)\n```\n\nPostgreSQL:\n\n```sql\n([\s\S]*?)\n```(?:\n\nParameters[^\n]*\n\n```sh\n([\s\S]*?)\n```)?/g;

export function printedQueries(markdown: string): PrintedQuery[] {
  return [...markdown.matchAll(BLOCK)].map(([, sqlite, postgres, shell]) => ({
    sqlite: sqlite!,
    postgres: postgres!,
    // Undo the shell quoting exactly as a shell would for '…' with '\'' escapes.
    params: parseSqlParams(
      [...(shell ?? "").matchAll(/--param '((?:[^']|'\\'')*)'/g)].map((m) => m[1]!.replaceAll("'\\''", "'")),
    ),
  }));
}
