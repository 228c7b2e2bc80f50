// Runs the real CLI (`node bin/flagtrail.js …`) in a child process, as a user would, from the TypeScript
// sources (FLAGTRAIL_FROM_SOURCE=1) so that a test run never depends on a fresh build of dist/.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI_PATH = fileURLToPath(new URL("../../bin/flagtrail.js", import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /**
   * Added to a copy of process.env with every FLAGTRAIL_* variable removed (tests stay hermetic), except
   * FLAGTRAIL_FROM_SOURCE=1.
   */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Kill the child after this many ms (the result then has signal SIGKILL). Default 60 s. */
  timeoutMs?: number;
  /** Called with the child right after it starts (e.g. to kill it mid-run). */
  onSpawn?: (child: ChildProcess) => void;
  input?: string;
  /** Options for node itself, before the script (e.g. `--import` of a test hook). */
  nodeArgs?: readonly string[];
}

export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("FLAGTRAIL_")) env[key] = value;
  }
  env.FLAGTRAIL_FROM_SOURCE = "1";
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
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
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
