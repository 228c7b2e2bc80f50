// The HTML rendition is written from the Markdown a line at a time (issue 25): lines and UTF-8
// characters cut by the reader's chunks come out whole, and converting a long document takes the
// memory of a short one.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { writeComplianceHtml } from "../../src/report/html.ts";

const run = promisify(execFile);

/** The page's body: between <body> and </body>. */
function bodyOf(html: string): string {
  return html.slice(html.indexOf("<body>\n") + 7, html.lastIndexOf("\n</body>"));
}

describe("the HTML rendition, line by line", () => {
  it("keeps lines and multi-byte characters that straddle the reader's chunks", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-html-lines-"));
    // Paragraphs of lines of varied lengths with 2-, 3- and 4-byte characters: ~300 KB, so several
    // 64 KiB chunk boundaries fall inside lines and inside characters.
    const paragraphs: string[][] = [];
    for (let p = 0; p < 400; p += 1) {
      const lines: string[] = [];
      for (let l = 0; l < 1 + (p % 5); l += 1)
        lines.push(`é${"x".repeat((p * 37 + l * 11) % 300)}€ line ${p}.${l} 🚩`);
      paragraphs.push(lines);
    }
    const md = `# Title ü\n\n${paragraphs.map((lines) => lines.join("\n")).join("\n\n")}\n`;
    writeFileSync(join(dir, "r.md"), md);
    writeComplianceHtml(join(dir, "r.md"), join(dir, "r.html"));
    const html = readFileSync(join(dir, "r.html"), "utf8");
    expect(html).toContain("<title>Title ü</title>");
    expect(html).not.toContain("\uFFFD");
    expect(bodyOf(html)).toBe(
      [`<h1 id="title-ü">Title ü</h1>`, ...paragraphs.map((lines) => `<p>${lines.join("\n")}</p>`)].join(
        "\n",
      ),
    );
  });

  it("renders a long table and an unclosed fence as the whole document would", () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-html-table-"));
    const rows = Array.from({ length: 3000 }, (_, i) => `| e\\_${i} | ${i} |`);
    writeFileSync(
      join(dir, "r.md"),
      `| Entity | Changes |\n| --- | --- |\n${rows.join("\n")}\ntext\n\`\`\`sql\nSELECT 1\n`,
    );
    writeComplianceHtml(join(dir, "r.md"), join(dir, "r.html"));
    const body = bodyOf(readFileSync(join(dir, "r.html"), "utf8"));
    const trs = rows.map((_, i) => `<tr><td class="k">e_<wbr>${i}</td><td class="n">${i}</td></tr>`);
    expect(body).toBe(
      [
        "<table>",
        "<thead><tr><th>Entity</th><th>Changes</th></tr></thead>",
        "<tbody>",
        ...trs,
        "</tbody>",
        "</table>",
        "<p>text</p>",
        // Never closed: the fence takes every line to the end, the empty one after the last line break too.
        "<pre><code>SELECT 1\n</code></pre>",
      ].join("\n"),
    );
  });

  it("converts a 20 MB document in the memory of a small one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-html-memory-"));
    // A child process of its own, so that its peak RSS is the conversion's: the document is written a
    // table row at a time (never held), then converted.
    const script = `
      import { closeSync, openSync, writeSync } from "node:fs";
      import { writeComplianceHtml } from ${JSON.stringify(new URL("../../src/report/html.ts", import.meta.url).pathname)};
      const md = ${JSON.stringify(join(dir, "big.md"))};
      const fd = openSync(md, "w");
      writeSync(fd, "# Big\\n\\n| Time | Entity | Action type | By |\\n| --- | --- | --- | --- |\\n");
      let rows = "";
      for (let i = 0; i < 200_000; i += 1) {
        rows += "| 2023-06-01T00:00:00+02:00 | entity\\\\_" + i + " | config\\\\_conditions\\\\_update | User " + (i % 53) + " |\\n";
        if (rows.length > 1 << 20) {
          writeSync(fd, rows);
          rows = "";
        }
      }
      writeSync(fd, rows);
      closeSync(fd);
      globalThis.gc();
      const before = process.memoryUsage().rss;
      writeComplianceHtml(md, ${JSON.stringify(join(dir, "big.html"))});
      process.stdout.write(JSON.stringify({ before, peak: process.resourceUsage().maxRSS * 1024 }));
    `;
    const { stdout } = await run(process.execPath, [
      "--expose-gc",
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      script,
    ]);
    const { before, peak } = JSON.parse(stdout) as { before: number; peak: number };
    expect(readFileSync(join(dir, "big.html"), "utf8").length).toBeGreaterThan(20_000_000);
    // The whole document read as one string, split into lines and joined again took over 100 MB more.
    expect((peak - before) / 2 ** 20).toBeLessThan(48);
  });
});
