// `daemon --quiet` and `--json` do what their help says (issue 9): --quiet keeps warnings and errors
// only; --json writes JSON lines on a terminal too (a pseudo-terminal through script(1)).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLI_PATH, cliEnv, PROJECT_ROOT, runCli } from "../helpers/runCli.ts";
import { tempDbPath } from "../helpers/simSync.ts";

// A server that refuses connections: the cycle fails at once, after logging its start.
const env = {
  FLAGTRAIL_API_KEY: "console-test-key",
  FLAGTRAIL_BASE_URL: "http://127.0.0.1:9",
  FLAGTRAIL_RETRY_MAX_ATTEMPTS: "1",
};

const levels = (stderr: string) =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => (JSON.parse(l) as { level: string }).level);

describe("daemon output flags", () => {
  it("--quiet logs warnings and errors only", async () => {
    const [plain, quiet] = await Promise.all([
      runCli(["daemon", "--once", "--db", tempDbPath()], { env }),
      runCli(["daemon", "--once", "--db", tempDbPath(), "--quiet"], { env }),
    ]);
    expect([plain.code, quiet.code]).toEqual([1, 1]);
    expect(levels(plain.stderr)).toEqual(["info", "info", "error"]);
    expect(levels(quiet.stderr)).toEqual(["error"]);
    expect(quiet.stderr).not.toContain("console-test-key");
  });

  it.runIf(existsSync("/usr/bin/script"))("--json writes JSON lines on a terminal, text without it", () => {
    const onTerminal = (...flags: string[]) => {
      const command = [process.execPath, CLI_PATH, "daemon", "--once", "--db", tempDbPath(), ...flags].join(
        " ",
      );
      const result = spawnSync("/usr/bin/script", ["-qec", command, "/dev/null"], {
        cwd: PROJECT_ROOT,
        env: cliEnv(env),
        encoding: "utf8",
      });
      return result.stdout.split(/\r?\n/).filter((l) => / (info|error) |"level"/.test(l));
    };
    const json = onTerminal("--json");
    const text = onTerminal();
    expect(json.length).toBeGreaterThan(0);
    for (const line of json) expect(() => JSON.parse(line)).not.toThrow();
    expect(text[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\S+ info {2}lease\.acquired$/);
  });
});
