// Runs the CLI's main (src/cli.ts) inside the test's own process: the same commands, parsing, exit codes
// and sentences as a spawned `flagtrail`, without a process start per call (seconds each on a loaded
// machine). For the many checks of what a command prints; each command keeps spawned end-to-end tests
// (runCli) for what only a real process shows (signals, stdout closed, module loading, process exit).
// The commands read process.env and write process.stdout/stderr, so a call swaps those for its own and
// calls run one at a time.
import { main } from "../../src/cli.ts";
import { type CliResult, cliEnv, swapEnv } from "./runCli.ts";

type Write = typeof process.stdout.write;

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `flagtrail …args` in this process with `env` (as runCli's, FLAGTRAIL_* hermetic) and, if given,
 * `cwd` as the working directory meanwhile; never rejects.
 */
export function runCliInProcess(
  args: readonly string[],
  options: { env?: Record<string, string | undefined>; cwd?: string } = {},
): Promise<CliResult> {
  const run = queue.then(() => runOnce(args, options.env ?? {}, options.cwd));
  queue = run.catch(() => undefined);
  return run;
}

async function runOnce(
  args: readonly string[],
  extra: Record<string, string | undefined>,
  cwd: string | undefined,
): Promise<CliResult> {
  const outerCwd = process.cwd();
  const restoreEnv = swapEnv(cliEnv(extra));
  const stdout = capture(process.stdout);
  const stderr = capture(process.stderr);
  try {
    if (cwd !== undefined) process.chdir(cwd);
    const code = await main(["node", "flagtrail", ...args]);
    return { code, signal: null, stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    process.chdir(outerCwd);
    stdout.restore();
    stderr.restore();
    restoreEnv();
  }
}

/** Collects what is written to `stream` (as a pipe: not a TTY) until restore(). */
function capture(stream: NodeJS.WriteStream): { text: () => string; restore: () => void } {
  const chunks: string[] = [];
  const { write } = stream;
  const isTTY = Object.getOwnPropertyDescriptor(stream, "isTTY");
  Object.defineProperty(stream, "isTTY", { value: false, configurable: true, writable: true });
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    const callback = rest.find((r) => typeof r === "function") as (() => void) | undefined;
    if (callback) process.nextTick(callback);
    return true;
  }) as Write;
  return {
    text: () => chunks.join(""),
    restore: () => {
      stream.write = write;
      if (isTTY) Object.defineProperty(stream, "isTTY", isTTY);
      else delete (stream as { isTTY?: boolean }).isTTY;
    },
  };
}
