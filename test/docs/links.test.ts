// Issue 26: the README became one screen and reference pages under docs/. Every relative link between
// them must reach a file, and every #anchor a heading of it (as GitHub derives anchors from headings).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith(".md"),
);

/** GitHub's heading anchor: lower case, punctuation dropped except - and _, spaces to -. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] ?? "")));
}

describe("links in the README and docs/", () => {
  it("the README's first code block still holds the two first commands (CI runs `npm test` from it)", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const first = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    expect(first).toMatch(/^npm ci && npm run demo {3}#/m);
    expect(first).toMatch(/^npm test {17}#/m);
  });

  it.each(PAGES)("%s: every relative link reaches a file and its anchor", (page) => {
    const text = readFileSync(join(ROOT, page), "utf8").replace(/```[\s\S]*?```/g, "");
    const broken: string[] = [];
    for (const [, target = ""] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [path = "", anchor] = target.split("#");
      const file = path === "" ? join(ROOT, page) : join(ROOT, dirname(page), path);
      if (!existsSync(file)) broken.push(`${target}: no file ${relative(ROOT, file)}`);
      else if (anchor !== undefined && file.endsWith(".md") && !anchorsOf(file).has(anchor))
        broken.push(`${target}: no heading for #${anchor}`);
    }
    expect(broken).toEqual([]);
  });
});
