// Bad usage exits 2 with one clear sentence and writes nothing; --help of sync and status.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { tempDbPath } from "../helpers/simSync.ts";

const key = { FLAGTRAIL_API_KEY: "console-test-key" };

describe("flagtrail sync usage errors", () => {
  // The full table of bad inputs runs in-process (test/sync/syncCommand.test.ts); these few prove
  // the exit code and stderr of the real spawned CLI.
  const cases: { name: string; args: string[]; env?: Record<string, string>; message: RegExp }[] = [
    {
      name: "a malformed --since",
      args: ["--since", "2024-13-01"],
      message: /^flagtrail: --since: The start day must be a date YYYY-MM-DD, got "2024-13-01"\.\n$/,
    },
    { name: "an unknown option", args: ["--sinse", "2024-01-01"], message: /unknown option '--sinse'/ },
    {
      name: "an --until after tomorrow",
      args: ["--until", "2099-12-31"],
      message:
        /^flagtrail: --until: The end day 2099-12-31 is after tomorrow \(\d{4}-\d{2}-\d{2} in UTC\): no records exist there yet\.\n$/,
    },
    {
      name: "a --since before 2015",
      args: ["--since", "2004-03-01", "--until", "2024-03-31"],
      message:
        /^flagtrail: --since: The start day 2004-03-01 is before 2015-01-01, older than any console audit log; .* \(--allow-before-2015\)\.\n$/,
    },
    {
      name: "a missing key",
      args: [],
      env: {},
      message: /No API key: set FLAGTRAIL_API_KEY or FLAGTRAIL_API_KEY_FILE, or pass --api-key-file\./,
    },
  ];

  it("exits 2 with one clear sentence and creates no database, for every bad input", async () => {
    // The first case spawned (end to end), the others in this process: a CLI start costs about a second.
    const results = await Promise.all(
      cases.map(async (c, i) => {
        const db = tempDbPath();
        const run = i === 0 ? runCli : runCliInProcess;
        const result = await run(["sync", "--db", db, ...c.args], { env: c.env ?? key });
        return { c, db, result };
      }),
    );
    for (const { c, db, result } of results) {
      expect({ name: c.name, code: result.code }).toEqual({ name: c.name, code: 2 });
      expect(result.stderr).toMatch(c.message);
      expect(result.stdout).toBe("");
      expect(existsSync(db)).toBe(false);
    }
  });

  it("accepts an unknown action type with --allow-unknown-action-types (then fails to connect: exit 1)", async () => {
    const db = tempDbPath();
    const result = await runCli(
      ["sync", "--db", db, "--action-type", "brand_new_type", "--allow-unknown-action-types", "--quiet"],
      {
        env: { ...key, FLAGTRAIL_BASE_URL: "http://127.0.0.1:9", FLAGTRAIL_RETRY_MAX_ATTEMPTS: "1" },
      },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/ECONNREFUSED|connection/);
    // The host it tried is named, so a wrong base URL shows.
    expect(result.stderr).toMatch(/^flagtrail: GET http:\/\/127\.0\.0\.1:9\/console\/v1\/audit_logs\?/);
    expect(result.stderr).not.toContain("console-test-key");
  });

  it("documents every option in --help", async () => {
    const sync = await runCliInProcess(["sync", "--help"]);
    expect(sync.code).toBe(0);
    for (const option of [
      "--since",
      "--until",
      "--action-type",
      "--allow-unknown-action-types",
      "--db",
      "--page-size",
      "--concurrency",
      "--lookback-days",
      "--full",
      "--base-url",
      "--api-key",
      "--auth-header",
      "--json",
      "--quiet",
    ]) {
      expect(sync.stdout).toContain(option);
    }
    const status = await runCliInProcess(["status", "--help"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("--db");
    expect(status.stdout).toContain("--json");
  });
});
