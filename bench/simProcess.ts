// The simulator in a process of its own for the sync benchmarks: on a 2-core machine an in-process
// simulator would take the sync's own core, and the real service is remote. Its control routes
// (/_sim/…) append records and read request counters over HTTP.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../bin/flagtrail.js", import.meta.url));
export const SIM_KEY = "console-simulator-key";

export interface SimProcess {
  url: string;
  append(records: { at?: number; name: string; actionType: string }[]): Promise<void>;
  /** `count` generated records at the newest end, stamped now: config edits, experiment changes… as in the history. */
  headInsert(count: number): Promise<void>;
  auditRequests(): Promise<number>;
  /** Every API request since the counters were reset (audit pages and entity reads). */
  requests(): Promise<number>;
  resetCounters(): Promise<void>;
  close(): Promise<void>;
}

async function control(url: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "STATSIG-API-KEY": SIM_KEY, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`simulator ${method} ${path}: HTTP ${response.status}`);
  return ((await response.json()) as { data: unknown }).data;
}

async function requestCounts(url: string): Promise<Record<string, number>> {
  return ((await control(url, "GET", "/_sim/counters")) as { requests: Record<string, number> }).requests;
}

/** Starts `flagtrail simulate` with these flags on 127.0.0.1 and waits for its address. */
export async function startSimProcess(flags: string[]): Promise<SimProcess> {
  const child: ChildProcess = spawn(process.execPath, [BIN, "simulate", "--port", "0", ...flags], {
    stdio: ["ignore", "pipe", "inherit"],
    // The sources, like the tests: the benchmark must not depend on a fresh build of dist/.
    env: { ...process.env, FLAGTRAIL_FROM_SOURCE: "1" },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (\S+)/.exec(seen);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`simulator exited with ${code}`)));
  });
  return {
    url,
    append: async (records) => {
      await control(url, "POST", "/_sim/records", { records });
    },
    headInsert: async (count) => {
      await control(url, "POST", "/_sim/head_insert", { count });
    },
    auditRequests: async () => (await requestCounts(url))["GET /console/v1/audit_logs"] ?? 0,
    requests: async () => Object.values(await requestCounts(url)).reduce((sum, n) => sum + n, 0),
    resetCounters: async () => {
      await control(url, "POST", "/_sim/counters/reset");
    },
    close: async () => {
      child.kill("SIGTERM");
      if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}
