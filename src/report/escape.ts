// Making untrusted text (entity names, change logs, people's names) safe in the two output formats.
import { escapeControls } from "../text/escape.ts";

// Shared with `flagtrail sql` (src/text/escape.ts); re-exported for the report's writers.
export { escapeControls, neutraliseFormula } from "../text/escape.ts";

// `:` and `@` too: GitHub's Markdown (GFM) turns `http://…`, `mailto:…` and `name@host.tld` in plain text
// into live links, and an escaped `:` or `@` is no longer part of a text run its autolinker scans.
const MARKDOWN_SPECIAL = /[\\`*_{}[\]<>()#+\-!|~&:@]/g;
// GFM's other autolink starts at a literal `www.`; escaping its dot breaks it the same way.
const WWW_DOT = /(www)\./gi;

/**
 * Inline Markdown text: every punctuation character Markdown, HTML or an autolinker could act on is
 * backslash-escaped, so names, URLs and e-mail addresses render as the literal text they are
 * (CommonMark allows escaping any ASCII punctuation), and line breaks become `<br>` so a value stays
 * inside its table cell, list item or heading. Control characters become visible `\u001b` text
 * (escaped after the punctuation, so their own backslash stays single).
 */
export function mdText(value: unknown): string {
  if (value === null || value === undefined || value === "") return "";
  return escapeControls(
    String(value)
      .replace(MARKDOWN_SPECIAL, (c) => `\\${c}`)
      .replace(WWW_DOT, "$1\\.")
      .replace(/\r\n|\r|\n/g, "<br>"),
    // Backslashes are Markdown escapes by now, and a tab is harmless in a table cell.
    { keep: "\\\t" },
  );
}

/** A table row from already-escaped cells. */
export function mdRow(cells: readonly string[]): string {
  return `| ${cells.map((c) => (c === "" ? " " : c)).join(" | ")} |`;
}

export function mdTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [mdRow(header), mdRow(header.map(() => "---")), ...rows.map(mdRow)].join("\n");
}
