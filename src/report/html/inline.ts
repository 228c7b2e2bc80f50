// Markdown inline text and table rows as HTML, for the compliance page (../html.ts): only the subset the
// report's sections write (escapes, <br>, `code`, **strong**, [links](#anchor), `|` cells).
const HTML_SPECIAL: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/** Text content: what an HTML serializer escapes there (so the page round-trips through a parser). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => HTML_SPECIAL[c]!);
}

/** An attribute value, double-quoted. */
export function escapeAttr(text: string): string {
  return text.replace(/[&"]/g, (c) => HTML_SPECIAL[c]!);
}

/** What can start inline markup below: an escape, <br>, code, **strong**, a [link](#anchor). */
const INLINE_MARKUP = /[\\<`*[]/g;

/** Escaped Markdown inline text (as mdText writes it, plus the sections' own markup) to HTML. */
export function inlineHtml(md: string): string {
  let html = "";
  let i = 0;
  while (i < md.length) {
    const c = md[i]!;
    if (c === "\\" && i + 1 < md.length && /[!-/:-@[-`{-~]/.test(md[i + 1]!)) {
      html += escapeHtml(md[i + 1]!);
      i += 2;
    } else if (md.startsWith("<br>", i)) {
      html += "<br>";
      i += 4;
    } else if (c === "`") {
      const fence = /^`+/.exec(md.slice(i))![0];
      const end = md.indexOf(fence, i + fence.length);
      if (end < 0) {
        html += escapeHtml(fence);
        i += fence.length;
        continue;
      }
      html += `<code>${escapeHtml(md.slice(i + fence.length, end).trim())}</code>`;
      i = end + fence.length;
    } else if (md.startsWith("**", i) && md.indexOf("**", i + 2) > i + 2) {
      const end = md.indexOf("**", i + 2);
      html += `<strong>${inlineHtml(md.slice(i + 2, end))}</strong>`;
      i = end + 2;
    } else if (c === "[" && /^\[[^\]]*\]\(#[^)\s]*\)/.test(md.slice(i))) {
      const match = /^\[([^\]]*)\]\((#[^)\s]*)\)/.exec(md.slice(i))!;
      html += `<a href="${escapeAttr(match[2]!)}">${inlineHtml(match[1]!)}</a>`;
      i += match[0].length;
    } else {
      // Up to the next character that may start markup, escaped at once.
      INLINE_MARKUP.lastIndex = i + 1;
      const next = INLINE_MARKUP.exec(md)?.index ?? md.length;
      html += escapeHtml(md.slice(i, next));
      i = next;
    }
  }
  return html;
}

/** A table row's cells: split on `|` that is not escaped. */
export function tableCells(line: string): string[] {
  const cells: string[] = [];
  let cell = "";
  const body = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  for (let i = 0; i < body.length; i++) {
    if (body[i] === "\\" && i + 1 < body.length) {
      cell += body[i]! + body[i + 1]!;
      i += 1;
    } else if (body[i] === "|") {
      cells.push(cell.trim());
      cell = "";
    } else cell += body[i];
  }
  cells.push(cell.trim());
  return cells;
}

/**
 * A time as the report prints it (ISO 8601 with its offset, perhaps its epoch ms after it): on one line,
 * where other cells may break anywhere (a browser would also break a time after each hyphen).
 */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})( \(\d+\))?$/;

/** A name or id short enough to keep whole (config_review_accept, a user id); longer text may break anywhere. */
const IDENTIFIER = /^[\w.:@-]{1,40}$/;

/** Longer than a name or id kept whole, and without a space: a token only breaking it anywhere fits. */
const LONG_TOKEN = /[^\s]{41}/;

/**
 * How a cell is set (see the page's CSS in ../html.ts): n a number, t a time, k a name or id kept whole,
 * w text with a token that may break anywhere; "" any other text, broken between words (a word only
 * when it would not fit: so a narrow column does not cut `experiment_review_accept` into three).
 */
function cellClass(cell: string): "n" | "t" | "k" | "w" | "" {
  if (/^-?\d+$/.test(cell)) return "n";
  if (ISO_INSTANT.test(cell)) return "t";
  // The Markdown cell escapes `_` and the like; the name is what the reader sees.
  const seen = cell.replace(/\\(.)/g, "$1");
  if (IDENTIFIER.test(seen)) return "k";
  return LONG_TOKEN.test(seen.replace(/<br>|\]\(#[^)\s]*\)/g, " ")) ? "w" : "";
}

/** After each `_` of the text (not of a tag): where a name like experiment_review_accept may wrap. */
function underscoreBreaks(html: string): string {
  return html.replace(/<[^>]*>|_/g, (match) => (match === "_" ? "_<wbr>" : match));
}

/** A time inside other text (`archived (read 2026-11-27T19:25:44+01:00)`), outside tags. */
const INSTANT_IN_TEXT = /<[^>]*>|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g;

/**
 * Each time in a paragraph or a text cell on one line, as a time cell is: a browser breaks after each
 * hyphen, and a timeline printed `2026-` / `11-` / `27T19:25:44+01:00` read as three values.
 */
export function keepTimesWhole(html: string): string {
  return html.replace(INSTANT_IN_TEXT, (match) =>
    match[0] === "<" ? match : `<span class="t">${match}</span>`,
  );
}

export function tableCell(cell: string): string {
  const kind = cellClass(cell);
  const html = inlineHtml(cell);
  return `<td${kind ? ` class="${kind}"` : ""}>${underscoreBreaks(kind === "t" ? html : keepTimesWhole(html))}</td>`;
}
