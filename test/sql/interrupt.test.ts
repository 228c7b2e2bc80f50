// `flagtrail sql` on SQLite stops a runaway query (issue 27 item 5): SIGTERM and SIGINT end it with exit 1
// and one sentence, promptly, and `--timeout` stops it the same way. better-sqlite3 cannot interrupt a
// statement, so the query runs in a child process (src/store/readOnlyQuery.ts) that must not outlive it.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.ts";
import { CLI_PATH, cliEnv, PROJECT_ROOT, runCli } from "../helpers/runCli.ts";
import { tempDbPath } from "../helpers/simSync.ts";

const RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c";

function emptyStore(): string {
  const db = tempDbPath("flagtrail-sql-stop-");
  openStore(db).close();
  return db;
}

/** Linux process state (R, S, Z…) of `pid`, or undefined once it is gone. */
function stateOf(pid: number): string | undefined {
  try {
    return /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

/** Live children of `pid` running the query (their command line names the driver). */
function queryChildren(pid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => {
      try {
        const stat = readFileSync(`/proc/${child}/stat`, "utf8");
        const ppid = Number(/\) \S (\d+)/.exec(stat)?.[1]);
        return ppid === pid && readFileSync(`/proc/${child}/cmdline`, "utf8").includes("better-sqlite3");
      } catch {
        return false;
      }
    });
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Exit {
  code: number | null;
  signal: string | null;
  stderr: string;
}

function start(args: readonly string[]): { child: ChildProcess; exited: Promise<Exit> } {
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    cwd: PROJECT_ROOT,
    env: cliEnv(),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<Exit>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exited };
}

/** The query's own process, once it runs (at most 20 s: time enough for a loaded machine to start node twice). */
async function queryRunning(cli: ChildProcess): Promise<number | undefined> {
  return waitFor(() => queryChildren(cli.pid!)[0], 20_000);
}

describe("a runaway SQLite query in flagtrail sql", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "ends on %s with exit 1 and one sentence, promptly, and its query process goes too",
    async (signal) => {
      const { child, exited } = start(["sql", "--db", emptyStore(), RUNAWAY]);
      const query = await queryRunning(child);
      child.kill(signal);
      const sent = Date.now();
      // Generous: the old code ignored the signal for good (it had to be killed with SIGKILL).
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const result = await exited;
      clearTimeout(timer);
      const took = Date.now() - sent;
      console.log(`sql stopped by ${signal} ${took} ms after the signal`);
      expect(result.signal).toBeNull();
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`flagtrail: stopped by ${signal}; anything already stored is kept.\n`);
      expect(took).toBeLessThan(5_000);
      expect(query).toBeDefined();
      // Killed (a zombie until reaped) or gone: never left running.
      expect(
        await waitFor(() => (["Z", undefined].includes(stateOf(query!)) ? true : undefined), 5_000),
      ).toBe(true);
    },
    60_000,
  );

  it("stops after --timeout seconds of work with exit 1 and one sentence", async () => {
    const started = Date.now();
    const result = await runCli(["sql", "--db", emptyStore(), "--timeout", "1", RUNAWAY], {
      timeoutMs: 40_000,
    });
    console.log(`sql --timeout 1 ended after ${Date.now() - started} ms (start-up included)`);
    expect(result.signal).toBeNull();
    expect(result.stderr).toBe(
      "flagtrail: The query was stopped after 1 s of work, its time limit; nothing was changed.\n",
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
  });

  it("does not outlive flagtrail killed with SIGKILL", async () => {
    const { child, exited } = start(["sql", "--db", emptyStore(), RUNAWAY]);
    const query = await queryRunning(child);
    expect(query).toBeDefined();
    child.kill("SIGKILL");
    await exited;
    // Its watchdog thread sees the parent gone and kills the process within a second or so.
    expect(await waitFor(() => (["Z", undefined].includes(stateOf(query!)) ? true : undefined), 10_000)).toBe(
      true,
    );
  });

  it("refuses a bad --timeout as bad usage", async () => {
    const result = await runCli(["sql", "--db", emptyStore(), "--timeout", "0", "SELECT 1"]);
    expect(result.stderr).toBe("flagtrail: --timeout: expected more than 0 and at most 86400 seconds\n");
    expect(result.code).toBe(2);
  });
});
