// compliance_<from>_<to>.html: the compliance Markdown as one self-contained page (inline CSS, the chart
// as inline SVG, no script, nothing fetched) that prints to PDF from a browser. It is rendered from the
// Markdown document itself (its complete rendition, every table whole: MarkdownOut), so every number in
// it is the Markdown's by construction; the converter knows
// only the subset the report's sections write (headings, paragraphs, tables, fenced code, the query
// <details>, and inline escapes, <br>, `code`, **strong** and [links](#anchor)).
// The page's body is written block by block by ./html/body.ts, its inline text by ./html/inline.ts.
import { closeSync, openSync, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { HtmlBody } from "./html/body.ts";
import { inlineHtml } from "./html/inline.ts";
import { TextFile } from "./sections/markdown.ts";

const CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; border-bottom: 1px solid #ccc; margin-top: 2rem; } h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 12px; }
th, td { border: 1px solid #bbb; padding: 2px 6px; text-align: left; vertical-align: top; overflow-wrap: break-word; }
th { background: #eee; overflow-wrap: normal; }
td.w { overflow-wrap: anywhere; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.t { white-space: nowrap; font-variant-numeric: tabular-nums; }
td.k { white-space: nowrap; }
span.t { white-space: nowrap; }
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
  /* Paper cannot be clicked open: every query prints (closed <details> hide their content otherwise). */
  details::details-content { content-visibility: visible; }
  summary { list-style: none; font-weight: bold; }
}
`.trim();

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
