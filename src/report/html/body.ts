// The compliance page's body, block by block: headings, paragraphs, tables, fenced code and the chart.
import { headingSlug, type TextFile } from "../sections/markdown.ts";
import { chartSvg } from "./chart.ts";
import { escapeAttr, escapeHtml, inlineHtml, keepTimesWhole, tableCell, tableCells } from "./inline.ts";

/**
 * The page's body from the Markdown's lines, one at a time: what is held is the current paragraph, the
 * current fenced block (a query, the chart) and the headings' slugs, never the document, so a long
 * report renders in the memory of a short one. Blocks are written separated by a line break.
 */
export class HtmlBody {
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
    if (this.paragraph.length > 0)
      this.block(`<p>${keepTimesWhole(this.paragraph.map(inlineHtml).join("\n"))}</p>`);
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
