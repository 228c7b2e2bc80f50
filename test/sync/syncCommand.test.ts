// `flagtrail sync` option handling in-process (main() is what bin/flagtrail.js runs).
import { existsSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { main } from "../../src/cli.ts";
import { checkActionTypes } from "../../src/commands/actionTypes.ts";
import { formatSummary, syncOptionsShape } from "../../src/commands/sync.ts";
import { UsageError } from "../../src/errors.ts";
import type { SyncSummary } from "../../src/sync/runSync.ts";
import { tempDbPath } from "../helpers/simSync.ts";

async function runMain(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  try {
    return { code: await main(["node", "flagtrail", ...args]), stderr };
  } finally {
    spy.mockRestore();
    out.mockRestore();
  }
}

describe("sync options", () => {
  const saved = { ...process.env };
  // In place: a new object would be no real environment (a TZ set on it changes no zone) and would stay
  // process.env for the worker's next file.
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  });

  const cases: [string, string[], RegExp][] = [
    [
      "a malformed --since",
      ["--since", "2024-13-01"],
      /^flagtrail: --since: The start day must be a date YYYY-MM-DD, got "2024-13-01"\.$/m,
    ],
    [
      "an impossible --until",
      ["--until", "2023-02-29"],
      /^flagtrail: --until: The end day must be a date YYYY-MM-DD, got "2023-02-29"\.$/m,
    ],
    [
      "--since after --until",
      ["--since", "2024-05-02", "--until", "2024-05-01"],
      /^flagtrail: --since\/--until: The start day 2024-05-02 is after the end day 2024-05-01\.$/m,
    ],
    [
      "a zero page size",
      ["--page-size", "0"],
      /^flagtrail: --page-size: The page size must be at least 1\.$/m,
    ],
    [
      "a page size of a billion",
      ["--page-size", "1000000000"],
      /^flagtrail: --page-size: The page size must be at most 10000\.$/m,
    ],
    [
      "a concurrency of 100000",
      ["--concurrency", "100000"],
      /^flagtrail: --concurrency: The concurrency must be at most 64\.$/m,
    ],
    ["a non-numeric concurrency", ["--concurrency", "two"], /--concurrency: expected a whole number/],
    ["a negative lookback", ["--lookback-days", "-1"], /--lookback-days: expected a whole number/],
    ["an unknown action type", ["--action-type", "gate_updat"], /closest valid: gate_update/],
    ["a non-http base URL", ["--base-url", "file:///etc"], /The base URL must be an http/],
    ["a bad auth header", ["--auth-header", "two words"], /valid HTTP header name/],
  ];
  for (const [name, args, message] of cases) {
    it(`exits 2 on ${name} before touching the database`, async () => {
      const db = tempDbPath();
      const { code, stderr } = await runMain(["sync", "--db", db, "--api-key", "console-k", ...args]);
      expect(code).toBe(2);
      expect(stderr).toMatch(message);
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(existsSync(db)).toBe(false);
    });
  }

  it("takes --action-type repeated or comma-separated, as report does", () => {
    const { actionType } = z
      .object(syncOptionsShape)
      .parse({ actionType: ["gate_update, experiment_start", "config_conditions_update"] });
    expect(actionType).toEqual(["gate_update", "experiment_start", "config_conditions_update"]);
  });

  it("names the closest valid action types and lets unknown ones pass when allowed", () => {
    expect(() => checkActionTypes(["gate_update", "experiment_strat"], false)).toThrow(UsageError);
    expect(() => checkActionTypes(["experiment_strat"], false)).toThrow(/experiment_start/);
    expect(() => checkActionTypes(["experiment_strat"], true)).not.toThrow();
    expect(() => checkActionTypes(["gate_update"], false)).not.toThrow();
  });

  it("formats the summary with every count", () => {
    const summary: SyncSummary = {
      runId: 3,
      outcome: "ok",
      filterKey: "all",
      actionTypes: [],
      range: { since: "2024-01-01", until: "2024-03-31" },
      resumed: false,
      windows: 4,
      fetched: 120,
      inserted: 100,
      duplicates: 18,
      mutations: 1,
      quarantined: 1,
      warnings: 0,
      requests: 20,
      throttled: 2,
      retries: 3,
      pageSize: 100,
      coverageRequests: 2,
      seconds: 1.5,
      coverageDays: 91,
      coverageGaps: [{ day: "2024-02-02", local: 3, server: 4 }],
      coverageOpenDays: ["2024-03-31"],
      warningMessages: [],
    };
    const text = formatSummary(summary);
    expect(text).toContain("Synced 2024-01-01 .. 2024-03-31 (all action types) in 1.5 s");
    expect(text).toContain("fetched 120, new 100, duplicates 18, mutations 1, quarantined 1, warnings 0");
    // Not "(coverage 2)": beside "coverage 91 days" a first backfill read "requests 64 (coverage 0)".
    expect(text).toContain("requests 20 (2 of them for coverage), retries 3, 429s received 2, page size 100");
    expect(text).toContain("gap 2024-02-02: 3 stored, server says 4");
    expect(text).toContain("open days 2024-03-31: the server's day had not ended");
  });
});
