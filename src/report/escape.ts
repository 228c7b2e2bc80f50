// Making untrusted text (entity names, change logs, people's names) safe in the two output formats.
import { escapeControls } from "../text/escape.ts";

// Shared with `flagtrail sql` (src/text/escape.ts); re-exported for the report's writers.
export { escapeControls, neutraliseFormula } from "../text/escape.ts";

const MARKDOWN_SPECIAL = /[\\`*_{}[\]<>()#+\-!|~&]/g;

/**
 * Inline Markdown text: every punctuation character Markdown or HTML could act on is backslash-escaped
 * (CommonMark allows escaping any ASCII punctuation), and line breaks become `<br>` so a value stays
 * inside its table cell, list item or heading. Control characters become visible `\u001b` text
 * (escaped after the punctuation, so their own backslash stays single).
 */
export function mdText(value: unknown): string {
  if (value === null || value === undefined || value === "") return "";
  return escapeControls(
    String(value)
      .replace(MARKDOWN_SPECIAL, (c) => `\\${c}`)
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
