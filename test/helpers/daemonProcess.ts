// Shared pieces of the daemon tests (SQLite and PostgreSQL): a `flagtrail daemon` child process whose
// log can be watched while it runs, its JSON log lines, and polling until something holds.
import type { ChildProcess } from "node:child_process";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { type CliResult, runCli } from "./runCli.ts";

export interface DaemonProcess {
  done: Promise<CliResult>;
  child: () => ChildProcess;
  stderrSoFar: () => string;
}

export function spawnDaemon(args: string[], env: Record<string, string>): DaemonProcess {
  let child: ChildProcess | undefined;
  let live = "";
  const done = runCli(["daemon", ...args], {
    env,
    // Tests stop their daemons themselves; this only ends one a failed test left running. 45 s killed
    // a daemon a test was still waiting on, on a machine loaded 8 processes a core.
    timeoutMs: 150_000,
    onSpawn: (c) => {
      child = c;
      c.stderr?.on("data", (chunk: string) => {
        live += chunk;
      });
    },
  });
  return { done, child: () => child!, stderrSoFar: () => live };
}

export interface LogEvent {
  event: string;
  [key: string]: unknown;
}

/** The JSON log lines of a daemon's stderr (complete lines only, so it can read a running one's log). */
export function logEvents(stderr: string): LogEvent[] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("{") && line.endsWith("}"))
    .map((line) => JSON.parse(line) as LogEvent);
}

/**
 * Polls `ready` every 50 ms; throws after 1,200 polls (a minute or more: a hung process fails the test
 * instead of hanging it, and a loaded machine makes a run slower, not red).
 */
export async function waitUntil(ready: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 50) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** API requests a simulator has received so far (counted on arrival, before any latency). */
export function requestsServed(sim: RunningSimulator): number {
  return Object.values(sim.control.counters().requests).reduce((sum, n) => sum + n, 0);
}
