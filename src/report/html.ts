// compliance_<from>_<to>.html: the compliance Markdown as one self-contained page (inline CSS, the chart
// as inline SVG, no script, nothing fetched) that prints to PDF from a browser. It is rendered from the
// Markdown file itself, so every number in it is the Markdown's by construction; the converter knows
// only the subset the report's sections write (headings, paragraphs, tables, fenced code, the query
// <details>, and inline escapes, <br>, `code`, **strong** and [links](#anchor)).
import { closeSync, openSync, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { headingSlug, TextFile } from "./sections/markdown.ts";

const CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; border-bottom: 1px solid #ccc; margin-top: 2rem; } h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 12px; }
th, td { border: 1px solid #bbb; padding: 2px 6px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: #eee; overflow-wrap: normal; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.t { white-space: nowrap; font-variant-numeric: tabular-nums; }
td.k { white-space: nowrap; }
code, pre { font: 12px/1.35 ui-monospace, Menlo, Consolas, monospace; }
pre { background: #f6f6f6; padding: .5rem; white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .25rem 0 1rem; color: #444; }
svg.chart { width: 100%; max-width: 60rem; height: auto; }
svg.chart text { font: 10px sans-serif; fill: #333; }
svg.chart rect { fill: #4a6fa5; }
@page { margin: 15mm; }
@media print {
  body { margin: 0; max-width: none; font-size: 11px; }
  h2, h3 { break-after: avoid; }
  tr, svg.chart { break-inside: avoid; }
  thead { display: table-header-group; }
  a { color: inherit; text-decoration: none; }
  /* A printed page is narrower than the table kept whole: names may wrap, times stay on one line
     (wrapped at their hyphen they read as two values). */
  td.k { white-space: normal; }
  td.t { white-space: nowrap; overflow-wrap: normal; font-size: 10px; }
}
`.trim();

const HTML_SPECIAL: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/** Text content: what an HTML serializer escapes there (so the page round-trips through a parser). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => HTML_SPECIAL[c]!);
}

/** An attribute value, double-quoted. */
function escapeAttr(text: string): string {
  return text.replace(/[&"]/g, (c) => HTML_SPECIAL[c]!);
}

/** What can start inline markup below: an escape, <br>, code, **strong**, a [link](#anchor). */
const INLINE_MARKUP = /[\\<`*[]/g;

/** Escaped Markdown inline text (as mdText writes it, plus the sections' own markup) to HTML. */
function inlineHtml(md: string): string {
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
function tableCells(line: string): string[] {
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

/** How a cell is set (see CSS): n a number, t a time, k a name or id kept whole; "" any other text. */
function cellClass(cell: string): "n" | "t" | "k" | "" {
  if (/^-?\d+$/.test(cell)) return "n";
  if (ISO_INSTANT.test(cell)) return "t";
  // The Markdown cell escapes `_` and the like; the name is what the reader sees.
  if (IDENTIFIER.test(cell.replace(/\\(.)/g, "$1"))) return "k";
  return "";
}

function tableCell(cell: string): string {
  const kind = cellClass(cell);
  return `<td${kind ? ` class="${kind}"` : ""}>${inlineHtml(cell)}</td>`;
}

/** The Mermaid xychart the daily section writes, drawn as an SVG bar chart with the same numbers. */
function chartSvg(mermaid: readonly string[]): string {
  const labels = [...(mermaid.find((l) => l.trim().startsWith("x-axis")) ?? "").matchAll(/"([^"]*)"/g)].map(
    (m) => m[1]!,
  );
  const barLine = mermaid.find((l) => l.trim().startsWith("bar")) ?? "";
  const values = (/\[(.*)\]/.exec(barLine)?.[1] ?? "")
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "")
    .map(Number);
  const title = /title "([^"]*)"/.exec(mermaid.join("\n"))?.[1] ?? "";
  const max = Math.max(1, ...values);
  const [w, h, left, bottom, top] = [760, 260, 44, 40, 24];
  const slot = (w - left - 8) / Math.max(1, values.length);
  const scale = (h - top - bottom) / max;
  const parts = [
    `<svg class="chart" viewBox="0 0 ${w} ${h}" role="img" aria-label="${escapeAttr(title)}">`,
    `<text x="${w / 2}" y="14" text-anchor="middle">${escapeHtml(title)}</text>`,
    `<line x1="${left}" y1="${h - bottom}" x2="${w - 8}" y2="${h - bottom}" stroke="#999"></line>`,
    `<text x="${left - 4}" y="${top + 4}" text-anchor="end">${max}</text>`,
    `<text x="${left - 4}" y="${h - bottom}" text-anchor="end">0</text>`,
  ];
  values.forEach((v, k) => {
    const x = left + k * slot;
    const bh = v * scale;
    const cx = (x + slot / 2).toFixed(1);
    parts.push(
      `<rect x="${(x + slot * 0.15).toFixed(1)}" y="${(h - bottom - bh).toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" height="${bh.toFixed(1)}"><title>${escapeHtml(labels[k] ?? "")}: ${v}</title></rect>`,
      `<text x="${cx}" y="${h - bottom + 12}" text-anchor="end" transform="rotate(-45 ${cx} ${h - bottom + 12})">${escapeHtml(labels[k] ?? "")}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n");
}

/**
 * The page's body from the Markdown's lines, one at a time: what is held is the current paragraph, the
 * current fenced block (a query, the chart) and the headings' slugs, never the document, so a long
 * report renders in the memory of a short one. Blocks are written separated by a line break.
 */
class HtmlBody {
  // A repeated heading (each project's section of a combined report repeats them) gets its slug with
  // -1, -2…, as on GitHub, which is what the summaries' links point at (sections/markdown.ts anchor).
  private readonly slugsSeen = new Map<string, number>();
  private paragraph: string[] = [];
  private fence: { language: string; body: string[] } | null = null;
  /** Lines of the table being written (its header, the separator line, rows); 0 outside a table. */
  private tableLines = 0;
  private first = true;

  constructor(private readonly out: TextFile) {}

  line(line: string): void {
    if (this.fence) {
      if (line === "```") this.endFence();
      else this.fence.body.push(line);
      return;
    }
    if (this.tableLines > 0) {
      if (line.startsWith("| ")) {
        this.tableLine(line);
        return;
      }
      this.endTable();
    }
    const fence = /^```(\w*)$/.exec(line);
    const heading = /^(#{1,6}) (.*)$/.exec(line);
    if (fence) {
      this.endParagraph();
      this.fence = { language: fence[1]!, body: [] };
    } else if (heading) {
      this.endParagraph();
      this.heading(heading[1]!.length, heading[2]!);
    } else if (line.startsWith("| ")) {
      this.endParagraph();
      this.tableLine(line);
    } else if (line === "<details><summary>Query</summary>" || line === "</details>") {
      this.endParagraph();
      this.block(line);
    } else if (line.trim() === "") this.endParagraph();
    else this.paragraph.push(line);
  }

  /** After the last line: closes what is still open (a fence never closed runs to the end). */
  end(): void {
    if (this.fence) this.endFence();
    if (this.tableLines > 0) this.endTable();
    this.endParagraph();
  }

  private block(html: string): void {
    this.out.write(this.first ? html : `\n${html}`);
    this.first = false;
  }

  private endParagraph(): void {
    if (this.paragraph.length > 0) this.block(`<p>${this.paragraph.map(inlineHtml).join("\n")}</p>`);
    this.paragraph = [];
  }

  private endFence(): void {
    const { language, body } = this.fence!;
    this.fence = null;
    this.block(
      language === "mermaid" ? chartSvg(body) : `<pre><code>${escapeHtml(body.join("\n"))}</code></pre>`,
    );
  }

  private heading(level: number, markdown: string): void {
    const slug = headingSlug(markdown);
    const seen = this.slugsSeen.get(slug) ?? 0;
    this.slugsSeen.set(slug, seen + 1);
    const id = seen > 0 ? `${slug}-${seen}` : slug;
    this.block(`<h${level} id="${escapeAttr(id)}">${inlineHtml(markdown)}</h${level}>`);
  }

  /** The first line is the header, the second its separator (not shown), the others rows. */
  private tableLine(line: string): void {
    this.tableLines += 1;
    if (this.tableLines === 1) {
      this.block("<table>");
      this.block(
        `<thead><tr>${tableCells(line)
          .map((h) => `<th>${inlineHtml(h)}</th>`)
          .join("")}</tr></thead>`,
      );
      this.block("<tbody>");
    } else if (this.tableLines > 2) this.block(`<tr>${tableCells(line).map(tableCell).join("")}</tr>`);
  }

  private endTable(): void {
    this.tableLines = 0;
    this.block("</tbody>");
    this.block("</table>");
  }
}

/**
 * A file's lines as String.split("\n") gives them (the text after the last line break is a line too,
 * empty when the file ends with one), read and decoded a chunk at a time.
 */
function* fileLines(path: string): Generator<string> {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(1 << 16);
    const decoder = new StringDecoder("utf8");
    let rest = "";
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, null);
      const text = rest + (read === 0 ? decoder.end() : decoder.write(buffer.subarray(0, read)));
      let start = 0;
      for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", start)) {
        yield text.slice(start, end);
        start = end + 1;
      }
      rest = text.slice(start);
      if (read === 0) {
        yield rest;
        return;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The document's title: its first `# ` line (the page's <title> comes before its body). */
function titleOf(markdownPath: string): string {
  for (const line of fileLines(markdownPath)) {
    const title = /^# (.*)$/m.exec(line);
    if (title) return title[1]!;
  }
  return "Compliance report";
}

/**
 * Reads the compliance Markdown and writes its HTML rendition beside it, a line at a time (memory does
 * not grow with the report), durable when this returns.
 */
export function writeComplianceHtml(markdownPath: string, htmlPath: string): void {
  const out = new TextFile(htmlPath);
  try {
    out.write(
      [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        `<title>${inlineHtml(titleOf(markdownPath))}</title>`,
        `<style>\n${CSS}\n</style>`,
        "</head>",
        "<body>",
        "",
      ].join("\n"),
    );
    const body = new HtmlBody(out);
    for (const line of fileLines(markdownPath)) body.line(line);
    body.end();
    out.write("\n</body>\n</html>\n");
  } finally {
    out.close();
  }
}
