// Control characters in names (issue 13 item 6): visible in the Markdown, kept as data in the CSV.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeReports } from "../../src/report/writeReports.ts";
import { openStore } from "../../src/store/open.ts";
import { escapeControls } from "../../src/text/escape.ts";
import { insertSyncedRecords, makeRecord } from "./fixtures.ts";

/** Clears the screen, retitles the terminal, rings, backspaces; NUL, DEL and an 8-bit CSI. */
const HOSTILE = "evil\u001b[2J\u001b]0;pwned\u0007\b\u0000x\u007f\u009b31m";
const ANY_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("escapeControls as the Markdown writer calls it", () => {
  const markdown = (text: string) => escapeControls(text, { keep: "\\\t\n\r" });
  it("writes ESC, BEL, BS, NUL, DEL and C1 controls as \\u and four hex digits, and nothing else", () => {
    expect(markdown("\u001b\u0007\b\u0000\u007f\u0080\u009b\u009f")).toBe(
      "\\u001b\\u0007\\u0008\\u0000\\u007f\\u0080\\u009b\\u009f",
    );
    expect(markdown("tab\there\nline\r\né ü 名 🚀 \u00a0")).toBe("tab\there\nline\r\né ü 名 🚀 \u00a0");
  });
});

describe("a hostile name through the report", () => {
  it("shows every control character visibly in the Markdown and keeps the CSV's data as it is", async () => {
    const store = openStore(":memory:");
    try {
      insertSyncedRecords(store, [
        makeRecord({ at: Date.UTC(2024, 5, 3, 9), name: HOSTILE, actionType: "experiment_start" }),
        makeRecord({
          at: Date.UTC(2024, 5, 3, 10),
          name: HOSTILE,
          actionType: "gate_update",
          updatedBy: `Mallory${HOSTILE}`,
          changeLog: HOSTILE,
        }),
      ]);
      const outDir = mkdtempSync(join(tmpdir(), "flagtrail-control-"));
      const result = await writeReports({
        store,
        from: "2024-06-01",
        to: "2024-06-30",
        outDir,
        generatedAt: 0,
      });
      const md = readFileSync(join(outDir, "compliance_2024-06-01_2024-06-30.md"), "utf8");
      expect(md).not.toMatch(ANY_CONTROL);
      const visible = "evil\\u001b\\[2J\\u001b\\]0;pwned\\u0007\\u0008\\u0000x\\u007f\\u009b31m";
      // In the per-experiment and per-config summaries, and in the unreviewed list with its author.
      expect(md).toContain(`\n| ${visible} | 1 | 2024-06-03T09:00:00+00:00 |`);
      expect(md).toContain(`\n| ${visible} | 1 | 0 | 2024-06-03T10:00:00+00:00 |`);
      expect(md).toContain(`| ${visible} | gate\\_update | Mallory${visible} |`);
      const csv = readFileSync(join(outDir, "config-edits_2024-06-01_2024-06-30.csv"), "utf8");
      expect(csv).toContain(`,${HOSTILE},gate_update,${HOSTILE},`);
      expect(result.counts.configEdits).toBe(1);
    } finally {
      store.close();
    }
  });
});
