// Runs the real CLI (`node bin/flagtrail.js …`) in a child process, as a user would: the copy the run
// compiled from the sources when it started (test/helpers/compiledCli.ts), so that a test run never
// depends on a fresh build of dist/. Without one (FLAGTRAIL_TEST_FROM_SOURCE=1, or a config without that
// setup), the project's own bin/flagtrail.js runs the TypeScript sources (FLAGTRAIL_FROM_SOURCE=1). Runs
// with module hooks that watch the sources load run the compiled copy too (three times faster to start
// than the sources through tsx): the hooks name its modules by their sources (test/helpers/sourceUrl.mjs).
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";

export const PROJECT_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SOURCE_CLI = fileURLToPath(new URL("../../bin/flagtrail.js", import.meta.url));
/** The compiled copy's bin, in a test worker of a run that made one (not in a globalSetup). */
function compiledCli(): string | undefined {
  try {
    return inject("compiledCli");
  } catch {
    return undefined; // outside a worker: test/campaign/summary.ts imports PROJECT_ROOT from here
  }
}
const COMPILED_CLI = compiledCli();
/** The bin/flagtrail.js a spawned CLI runs; spawn it with cliEnv(), which says whether from source. */
export const CLI_PATH = COMPILED_CLI ?? SOURCE_CLI;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /**
   * Added to a copy of process.env with every FLAGTRAIL_* variable removed (tests stay hermetic), except
   * FLAGTRAIL_FROM_SOURCE=1 when the CLI runs from source.
   */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /**
   * Kill the child after this many ms (the result then has signal SIGKILL). Default 150 s, under the
   * suite's 240 s test timeout: 60 s killed a `status` run from source with module hooks at load 30.
   */
  timeoutMs?: number;
  /** Called with the child right after it starts (e.g. to kill it mid-run). */
  onSpawn?: (child: ChildProcess) => void;
  input?: string;
  /** Options for node itself, before the script (e.g. `--import` of a test hook). */
  nodeArgs?: readonly string[];
}

/** The test's own process.env while a CLI run in this process has its env swapped in (see swapEnv). */
let outerEnv: NodeJS.ProcessEnv | undefined;

/**
 * Puts `env` in place of process.env's contents (for a CLI run in this process, test/helpers/
 * inProcessCli.ts) until the returned function puts the test's back. CLIs spawned meanwhile still get
 * the test's environment.
 */
export function swapEnv(env: NodeJS.ProcessEnv): () => void {
  const saved = { ...process.env };
  outerEnv = saved;
  replaceEnv(env);
  return () => {
    replaceEnv(saved);
    outerEnv = undefined;
  };
}

function replaceEnv(env: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(process.env)) {
    if (!(key in env)) delete process.env[key];
  }
  Object.assign(process.env, env);
}

export function cliEnv(
  extra: Record<string, string | undefined> = {},
  fromSource = CLI_PATH === SOURCE_CLI,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(outerEnv ?? process.env)) {
    if (!key.startsWith("FLAGTRAIL_")) env[key] = value;
  }
  if (fromSource) env.FLAGTRAIL_FROM_SOURCE = "1";
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** Spawns the CLI with `args`; resolves when it exits (never rejects on a non-zero exit code). */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI_PATH, ...args], {
      cwd: options.cwd ?? PROJECT_ROOT,
      env: cliEnv(options.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 150_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
    options.onSpawn?.(child);
  });
}
