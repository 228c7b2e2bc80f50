// The exec sink: runs the configured program with its arguments (never through a shell: nothing of a
// finding is ever parsed as a command), the alert's JSON on its stdin, the finding id in
// FLAGTRAIL_FINDING_ID and its event id in FLAGTRAIL_EVENT_ID (the idempotency key of a resend).
// Delivered when it exits 0; killed after its timeout. Its output is not kept: it could echo what it was
// given to places we do not control. For the same reason it gets the environment without flagtrail's
// secrets and those the config names.
import { spawn } from "node:child_process";
import type { SinkOf } from "../config.ts";
import type { DueAlert } from "../deliver.ts";
import type { SendFailure } from "./failure.ts";

/** flagtrail's own secrets: the console API key, the signing keys, the store's URL and password. */
const OWN_SECRET_ENV = [
  "FLAGTRAIL_API_KEY",
  "FLAGTRAIL_SIGNING_KEY",
  "FLAGTRAIL_SIGNING_KEY_PREVIOUS",
  "FLAGTRAIL_DB",
  "PGPASSWORD",
];

/** The program's environment: this process's, without the secrets, and the finding id. */
function execEnv(
  sink: SinkOf<"exec">,
  row: DueAlert,
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const hidden = new Set([...OWN_SECRET_ENV, ...sink.hiddenEnv]);
  const kept = Object.entries(env).filter(([name]) => !hidden.has(name));
  return { ...Object.fromEntries(kept), FLAGTRAIL_FINDING_ID: row.finding_id, FLAGTRAIL_EVENT_ID: row.key };
}

/**
 * Runs the program for one alert. A program that cannot be started or does not finish in time fails the
 * same way for every alert (sinkDown); its exit status is its verdict on this alert alone.
 */
export function sendExec(sink: SinkOf<"exec">, row: DueAlert): Promise<SendFailure | null> {
  return new Promise((resolve) => {
    const child = spawn(sink.command, sink.args, {
      shell: false,
      stdio: ["pipe", "ignore", "ignore"],
      env: execEnv(sink, row),
      // A process group of its own (POSIX): a timeout kills what the program started too (a script's
      // `curl`, a `sleep`), not the program alone.
      detached: process.platform !== "win32",
    });
    const killAll = () => {
      try {
        if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    };
    // Out of the terminal's group, it would outlive a flagtrail stopped by Ctrl-C: it goes with it.
    process.once("exit", killAll);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killAll();
    }, sink.timeoutSeconds * 1000);
    const settle = () => {
      clearTimeout(timer);
      process.off("exit", killAll);
    };
    child.on("error", (error: NodeJS.ErrnoException) => {
      settle();
      resolve({ reason: `cannot run ${sink.command}: ${error.code ?? error.name}`, sinkDown: true });
    });
    child.on("close", (code, signal) => {
      settle();
      if (timedOut) resolve({ reason: `timed out after ${sink.timeoutSeconds} s`, sinkDown: true });
      else if (code === 0) resolve(null);
      else resolve({ reason: code === null ? `killed by ${signal}` : `exit ${code}`, sinkDown: false });
    });
    // A program that exits without reading its stdin closes the pipe: not an error of ours.
    child.stdin.on("error", () => {});
    child.stdin.end(row.payload);
  });
}
