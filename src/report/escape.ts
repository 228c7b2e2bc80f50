// Making untrusted text (entity names, change logs, people's names) safe in the two output formats.
import { escapeControls } from "../text/escape.ts";

// Shared with `flagtrail sql` (src/text/escape.ts); re-exported for the report's writers.
export { neutraliseFormula } from "../text/escape.ts";

// What Markdown (GFM) acts on inside a line: emphasis, code, links, HTML and entities, table pipes,
// strikethrough, the escape itself, and `@` (GFM autolinks `name@host.tld`).
const MARKDOWN_INLINE = /[\\`*_[\]<>|~&@]/g;
// At the start of a value, what could open a block: a heading, a list item, a quote.
const MARKDOWN_LINE_START = /^[#+\-!]/;
// GFM's other autolinks start at `scheme://`, `mailto:`/`xmpp:` and a literal `www.`: escaping the
// colon or the dot breaks them, so a URL renders as the text it is.
const URL_SCHEME_COLON = /:(?=\/\/)|(?<=\b(?:mailto|xmpp)):/gi;
const WWW_DOT = /(www)\./gi;

/**
 * Inline Markdown text: what Markdown, HTML or an autolinker would act on is backslash-escaped (and
 * nothing else, so `isEnabled: true → false` stays readable in the raw file), so names, URLs and e-mail
 * addresses render as the literal text they are, and line breaks become `<br>` so a value stays inside
 * its table cell, list item or heading. Control characters become visible `\u001b` text (escaped after
 * the punctuation, so their own backslash stays single).
 */
export function mdText(value: unknown): string {
  if (value === null || value === undefined || value === "") return "";
  return escapeControls(
    String(value)
      .replace(MARKDOWN_INLINE, (c) => `\\${c}`)
      .replace(MARKDOWN_LINE_START, (c) => `\\${c}`)
      .replace(URL_SCHEME_COLON, "\\:")
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
