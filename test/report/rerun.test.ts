// A re-run keeps the earlier generation time (issue 26), comparing the files as bytes a block at a time
// (bounded memory): a time that straddles two blocks is still found, and any other difference, before or
// after it, or in length, keeps the new time and leaves the staged files as they were.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keepEarlierGenerationTime } from "../../src/report/rerun.ts";

const NOW = "2026-11-27T01:00:00.000Z";
const EARLIER = "2026-11-26T01:00:00.000Z";
const BLOCK = 1 << 16;
const names = { data: ["a.csv", "report.md"], manifest: "manifest.json" };

/** Text of `size` bytes (multi-byte characters included) with `time` at each offset given. */
function text(size: number, time: string, at: readonly number[]): string {
  const chars = Array.from({ length: size }, (_, i) =>
    i % 97 === 0 ? "\n" : String.fromCharCode(97 + (i % 26)),
  );
  for (const offset of at) chars.splice(offset, time.length, ...time);
  return `\u00e9${chars.join("")}`; // two bytes first: offsets in bytes are one more than in characters
}

function dirs(): { staging: string; outDir: string } {
  const outDir = mkdtempSync(join(tmpdir(), "flagtrail-rerun-"));
  const staging = mkdtempSync(join(outDir, ".staging-"));
  writeFileSync(join(outDir, names.manifest), JSON.stringify({ generatedAt: EARLIER }));
  return { staging, outDir };
}

// The time across the first block boundary, inside the second block, and as the file's last bytes.
const SIZE = 3 * BLOCK;
const AT = [BLOCK - 10, BLOCK + 500, SIZE - NOW.length];

describe("keepEarlierGenerationTime", () => {
  it("rewrites the staged files that hold the time, also across block boundaries, and names them", () => {
    const { staging, outDir } = dirs();
    writeFileSync(join(staging, "a.csv"), "x,y\r\n1,2\r\n");
    writeFileSync(join(outDir, "a.csv"), "x,y\r\n1,3\r\n"); // differs, but holds no time: the caller's to compare
    writeFileSync(join(staging, "report.md"), text(SIZE, NOW, AT));
    writeFileSync(join(outDir, "report.md"), text(SIZE, EARLIER, AT));

    expect(keepEarlierGenerationTime(staging, outDir, names, NOW)).toEqual({
      earlier: EARLIER,
      rewritten: ["report.md"],
    });
    expect(readFileSync(join(staging, "report.md"), "utf8")).toBe(text(SIZE, EARLIER, AT));
    expect(readFileSync(join(staging, "a.csv"), "utf8")).toBe("x,y\r\n1,2\r\n");
  });

  it.each([
    ["a byte after the last time", (s: string) => `${s.slice(0, -NOW.length - 1)}!${s.slice(-NOW.length)}`],
    ["a byte in the second block", (s: string) => `${s.slice(0, BLOCK + 2)}!${s.slice(BLOCK + 3)}`],
    ["an extra line at the end", (s: string) => `${s}\n`],
    ["one byte less", (s: string) => s.slice(0, -1)],
  ])("keeps the new time and rewrites nothing when the earlier file differs by %s", (_, change) => {
    const { staging, outDir } = dirs();
    writeFileSync(join(staging, "a.csv"), "x\r\n");
    writeFileSync(join(outDir, "a.csv"), "x\r\n");
    const staged = text(SIZE, NOW, AT);
    writeFileSync(join(staging, "report.md"), staged);
    writeFileSync(join(outDir, "report.md"), change(text(SIZE, EARLIER, AT)));

    expect(keepEarlierGenerationTime(staging, outDir, names, NOW)).toBeNull();
    expect(readFileSync(join(staging, "report.md"), "utf8")).toBe(staged);
  });

  it("keeps the new time when a file is new", () => {
    const { staging, outDir } = dirs();
    writeFileSync(join(staging, "a.csv"), "x\r\n");
    writeFileSync(join(staging, "report.md"), NOW);
    writeFileSync(join(outDir, "report.md"), EARLIER);
    expect(keepEarlierGenerationTime(staging, outDir, names, NOW)).toBeNull();
  });
});
