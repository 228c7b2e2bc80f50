// A completeness check of a period that runs into the future (trial h47 #5): days not over yet are left
// to the next sync (docs/controls.md), today and every later day alike, not kept as permanent gaps; the
// report's Completeness section says the same of them ("not over yet", not "no coverage data").
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, syncedWithControls } from "../helpers/simSync.ts";

describe("completeness over a period reaching into the future", () => {
  let sim: RunningSimulator;
  let env: Record<string, string>;

  beforeAll(async () => {
    ({ sim, env } = await syncedWithControls(
      [{ id: "complete", kind: "completeness", severity: "high" }],
      20,
    ));
  });

  afterAll(async () => {
    await sim?.close();
  });

  it("finds no gap on today or later days, and still finds a past day left unsynced", async () => {
    const ahead = daysAgo(-4);
    const result = await runCliInProcess(["check", "--from", daysAgo(5), "--to", ahead, "--format", "json"], {
      env,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([]);
    // The days before the synced range have no coverage: those are gaps.
    const before = await runCliInProcess(
      ["check", "--from", daysAgo(25), "--to", daysAgo(22), "--format", "json"],
      {
        env,
      },
    );
    const ids = (JSON.parse(before.stdout) as { id: string }[]).map((f) => f.id);
    expect(ids).toEqual([25, 24, 23, 22].map((n) => `complete:day-${daysAgo(n)}`));
  });

  it("the report names those days not over yet, and the past ones without coverage as such", async () => {
    const out = mkdtempSync(join(tmpdir(), "flagtrail-future-report-"));
    const from = daysAgo(22);
    const args = [
      "report",
      "--from",
      from,
      "--to",
      daysAgo(-2),
      "--tz",
      "UTC",
      "--format",
      "md",
      "--out",
      out,
    ];
    const result = await runCliInProcess(args, { env });
    expect(result.code, result.stderr).toBe(0);
    const md = readFileSync(join(out, readdirSync(out).find((f) => f.endsWith(".md"))!), "utf8");
    const future = [-1, -2].map((n) => daysAgo(n));
    // Tomorrow may have an open coverage row of its own (the sync lists it): "not over when checked" then.
    for (const day of future) expect(md).toMatch(new RegExp(`${day} \\(not over (yet|when checked)\\)`));
    expect(md).toContain(`${daysAgo(-2)} (not over yet)`);
    expect(md).toContain(`${daysAgo(22)} (no coverage data)`);
    expect(md).toContain(
      `Server days not over when this report was made (no sync has counted them yet): ${daysAgo(-2)}.`,
    );
    for (const day of future) expect(md).not.toContain(`${day} (no coverage data)`);
  });
});
