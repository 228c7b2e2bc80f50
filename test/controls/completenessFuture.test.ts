// A completeness check of a period that runs into the future (trial h47 #5): days not over yet are left
// to the next sync (docs/controls.md), today and every later day alike, not kept as permanent gaps.
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
});
