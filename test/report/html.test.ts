// The HTML rendition (issue 9): valid HTML by a real parser (parse5, the WHATWG parsing algorithm, which
// reports every parse error), self-contained (no script, nothing fetched, only in-page links), and with
// exactly the Markdown's numbers.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DefaultTreeAdapterMap, parse, serialize } from "parse5";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tableCell } from "../../src/report/html/inline.ts";
import { writeComplianceHtml } from "../../src/report/html.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import { insertSyncedRecords, makeRecord } from "./fixtures.ts";
import { buildScenarioStore, GENERATED_AT, SCENARIO } from "./scenario.ts";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];

function elements(node: Node, out: Element[] = []): Element[] {
  if ("tagName" in node) out.push(node);
  const children = "childNodes" in node ? node.childNodes : [];
  for (const child of children) elements(child, out);
  if ("content" in node && node.content) elements(node.content as Node, out);
  return out;
}

/** Text in document order, leaving out the subtrees of `skip` (query code, the chart). */
function text(node: Node, skip: ReadonlySet<string>): string {
  if (node.nodeName === "#text") return (node as DefaultTreeAdapterMap["textNode"]).value;
  if ("tagName" in node && skip.has(node.tagName)) return " ";
  if ("tagName" in node && (node.tagName === "td" || node.tagName === "th" || node.tagName === "br"))
    return ` ${("childNodes" in node ? node.childNodes : []).map((c) => text(c, skip)).join("")} `;
  return ("childNodes" in node ? node.childNodes : []).map((c) => text(c, skip)).join("");
}

const attr = (e: Element, name: string) => e.attrs.find((a) => a.name === name)?.value;

/** The numbers a reader sees in the Markdown: outside code blocks and link targets, escapes undone. */
function markdownNumbers(md: string): string[] {
  const prose = md
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/\]\(#[^)]*\)/g, "] ")
    .replace(/<br>/g, " ")
    .replace(/\\(.)/g, "$1");
  return prose.match(/\d+/g) ?? [];
}

function renditions(dir: string): { md: string; html: string } {
  const files = readdirSync(dir);
  const read = (ext: string) => readFileSync(join(dir, files.find((f) => f.endsWith(ext))!), "utf8");
  return { md: read(".md"), html: read(".html") };
}

function checkPage(md: string, html: string): void {
  const errors: string[] = [];
  const doc = parse(html, { onParseError: (e) => errors.push(`${e.code} at ${e.startLine}:${e.startCol}`) });
  expect(errors).toEqual([]);
  expect(html.startsWith("<!DOCTYPE html>\n")).toBe(true);
  const all = elements(doc);
  // parse5 reports the tokenizer's errors only; a tree the parser had to repair (an unclosed or
  // misnested element) serializes differently from the page as written.
  const body = all.find((e) => e.tagName === "body")!;
  // (The parser moves the whitespace after </body> and </html> into the body.)
  expect(serialize(body).trimEnd()).toBe(
    html.slice(html.indexOf("<body>") + 6, html.indexOf("</body>")).trimEnd(),
  );
  const tags = new Set(all.map((e) => e.tagName));
  for (const banned of ["script", "link", "img", "iframe", "object", "embed", "base", "form"])
    expect(tags.has(banned), banned).toBe(false);
  expect(tags.has("svg")).toBe(true);
  expect(tags.has("style")).toBe(true);
  const ids = new Set(all.map((e) => attr(e, "id")).filter(Boolean));
  for (const e of all) {
    expect(attr(e, "src"), e.tagName).toBeUndefined();
    for (const a of e.attrs) expect(a.name.startsWith("on"), a.name).toBe(false);
    const href = attr(e, "href");
    if (href !== undefined) {
      expect(href.startsWith("#"), href).toBe(true);
      expect(ids.has(href.slice(1)), href).toBe(true);
    }
  }
  expect(html).not.toMatch(/url\(|@import|https?:\/\/(?!x\.example|evil\.example|angle\.example)/);

  // Every number of the Markdown's prose and tables, in order, is the HTML's.
  expect(text(body, new Set(["pre", "svg"])).match(/\d+/g)).toEqual(markdownNumbers(md));
  // And the chart's bars are the Mermaid chart's.
  const bars = /\n {4}bar \[([^\]]*)\]/.exec(md)![1]!.split(", ");
  const rects = all.filter((e) => e.tagName === "rect");
  expect(rects.map((r) => /: (\d+)$/.exec(text(r, new Set()))![1])).toEqual(bars);
}

describe("the HTML report", () => {
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    store = buildScenarioStore(":memory:", { ruleDiffs: true });
    dir = mkdtempSync(join(tmpdir(), "flagtrail-html-"));
    await writeReports({
      store,
      ...SCENARIO,
      outDir: dir,
      formats: ["md", "html"],
      generatedAt: GENERATED_AT,
    });
  });
  afterAll(() => store.close());

  it("is valid, self-contained HTML with the Markdown's numbers", () => {
    const { md, html } = renditions(dir);
    checkPage(md, html);
    expect(html).toContain('<td><a href="#changes-with-no-approved-review-before-them">4</a></td>');
    expect(html).toContain("@media print");
    // A time stays on one line in a narrow column: every time cell is marked, none is left out.
    expect(html).toMatch(/<td class="t">\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}<\/td>/);
    expect(html).not.toMatch(/<td>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    expect(html).toContain('<td class="t">2024-03-29T00:00:00+01:00 (1711666800000)</td>');
    expect(html).toContain("td.t { white-space: nowrap;");
    // ...on screen. In print names wrap, but a time stays whole (issue 26: `2026-10-` / `01T00:…`).
    const print = html.slice(html.indexOf("@media print"));
    expect(print).toMatch(/td\.k \{ white-space: normal; \}/);
    expect(print).toMatch(/td\.t \{ white-space: nowrap; overflow-wrap: normal;/);
    // So do names and ids up to 40 characters, but in print they may wrap after an underscore.
    expect(html).toMatch(/<td class="k">(config|experiment)_<wbr>review_<wbr>accept<\/td>/);
  });

  it("keeps a time inside a paragraph or a text cell on one line, as a time cell is", () => {
    const { html } = renditions(dir);
    // A browser breaks after a hyphen: a timeline's time printed as `2026-` / `11-` / `27T19:…`.
    expect(html).toContain('(only from <span class="t">2024-03-29T00:00:00+01:00</span> on)');
    expect(html).toContain("span.t { white-space: nowrap; }");
    expect(tableCell("archived (read 2026-11-27T19:25:44+01:00)")).toBe(
      '<td>archived (read <span class="t">2026-11-27T19:25:44+01:00</span>)</td>',
    );
    expect(tableCell("experiment\\_start (2026-10-09T22:50:07+02:00) → archive\\_experiment")).toBe(
      '<td>experiment_<wbr>start (<span class="t">2026-10-09T22:50:07+02:00</span>) → archive_<wbr>experiment</td>',
    );
    expect(tableCell("2026-11-27T19:25:44+01:00")).toBe('<td class="t">2026-11-27T19:25:44+01:00</td>');
  });

  it("prints every query and wraps names at their underscores, never mid-word (a trial's PDF)", () => {
    const { html } = renditions(dir);
    const css = html.slice(html.indexOf("<style>"), html.indexOf("</style>"));
    const print = css.slice(css.indexOf("@media print"));
    // A closed <details> prints as its summary alone ("▶ Query"): its content is made visible on paper.
    expect(print).toContain("details::details-content { content-visibility: visible; }");
    expect(html).toContain("<details><summary>Query</summary>");
    // A cell breaks a word only when it could not fit otherwise (anywhere shrinks a column to a letter
    // and cut "experimen t_review_a ccept"); only a cell with a token longer than a name breaks anywhere.
    expect(css).toMatch(/th, td \{[^}]*overflow-wrap: break-word;/);
    expect(css).toContain("td.w { overflow-wrap: anywhere; }");
    expect(css.match(/overflow-wrap: anywhere/g)).toHaveLength(2); // td.w and pre
  });

  it("marks a cell with a token longer than a name, and only it, as breakable anywhere", () => {
    const out = mkdtempSync(join(tmpdir(), "flagtrail-html-cells-"));
    const token = "x".repeat(41);
    writeFileSync(
      join(out, "r.md"),
      `| A | B | C |\n| --- | --- | --- |\n| ${token} | see ${token} | [4](#a-very-long-anchor-of-a-heading-in-this-report) |\n`,
    );
    writeComplianceHtml(join(out, "r.md"), join(out, "r.html"));
    expect(readFileSync(join(out, "r.html"), "utf8")).toContain(
      `<tr><td class="w">${token}</td><td class="w">see ${token}</td><td><a href="#a-very-long-anchor-of-a-heading-in-this-report">4</a></td></tr>`,
    );
  });

  it("is listed in the manifest, and alone when only html is asked for", async () => {
    const only = mkdtempSync(join(tmpdir(), "flagtrail-html-only-"));
    const result = await writeReports({
      store,
      ...SCENARIO,
      outDir: only,
      formats: ["html"],
      generatedAt: 0,
    });
    // The scenario's zone is not UTC, so it is part of every name.
    const zone = SCENARIO.timeZone.replaceAll("/", "-");
    expect(readdirSync(only).sort()).toEqual([
      `compliance_${SCENARIO.from}_${SCENARIO.to}_${zone}.html`,
      `manifest_${SCENARIO.from}_${SCENARIO.to}_${zone}.json`,
    ]);
    expect(result.files.map((f) => [f.name, f.rows])).toEqual([
      [`compliance_${SCENARIO.from}_${SCENARIO.to}_${zone}.html`, 12],
    ]);
    const manifest = JSON.parse(readFileSync(result.manifestPath, "utf8"));
    expect(manifest.parameters.formats).toEqual(["html"]);
  });

  it("shows hostile names as text, never as links or markup", async () => {
    const june = openStore(":memory:");
    try {
      const names = [
        '=HYPERLINK("http://x.example/a?b=c","y")',
        "see https://evil.example/login <b>bold</b>",
        "<https://angle.example> ops@example.com www.example.com",
      ];
      insertSyncedRecords(
        june,
        names.map((name, i) =>
          makeRecord({ at: Date.UTC(2024, 5, 3, 9, i), name, actionType: "gate_update", updatedBy: name }),
        ),
      );
      const out = mkdtempSync(join(tmpdir(), "flagtrail-html-hostile-"));
      await writeReports({
        store: june,
        from: "2024-06-01",
        to: "2024-06-30",
        outDir: out,
        formats: ["md", "html"],
        generatedAt: 0,
      });
      const { md, html } = renditions(out);
      checkPage(md, html);
      expect(html).not.toContain("<b>");
      expect(html).toContain('<td>=HYPERLINK("http://x.example/a?b=c","y")</td>');
      expect(html).toContain("&lt;https://angle.example&gt; ops@example.com www.example.com");
    } finally {
      june.close();
    }
  });
});
