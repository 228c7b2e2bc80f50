// Running the CLI as users run it: the compiled dist/, rebuilt from the current sources first so that a
// figure is never that of a stale build.
import { execFile, execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** `--import` this: the process prints its peak RSS (KB) on stderr at exit, as `MAXRSS n`. */
export const PRINT_MAX_RSS =
  "data:text/javascript,process.on('exit',()=>process.stderr.write('MAXRSS '+process.resourceUsage().maxRSS+'\\n'))";

export function buildDist(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "inherit" });
}

/** Without FLAGTRAIL_FROM_SOURCE, whatever the caller's shell has: the bin must run dist/. */
export function compiledEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env.FLAGTRAIL_FROM_SOURCE;
  return env;
}

/** The peak RSS in MB a PRINT_MAX_RSS process printed. */
export function maxRssMb(stderr: string): number {
  const match = /MAXRSS (\d+)/.exec(stderr);
  if (!match?.[1]) throw new Error(`no MAXRSS line in: ${stderr.slice(-500)}`);
  return Number(match[1]) / 1024;
}

const REPORT_CHILD = fileURLToPath(new URL("./reportChild.mjs", import.meta.url));

/** What bench/reportChild.mjs prints: the figures of one measurement, in a process of its own. */
export interface ReportChildFigures {
  ms: number;
  cpuMs: number;
  peakRssMb: number;
  rssBeforeMb?: number;
  heapGrowthMb?: number;
  rows?: number;
  /** SHA-256 per CSV name. */
  csv?: Record<string, string>;
}

/** Runs bench/reportChild.mjs (the compiled dist/, built first by the caller) with `args`. */
export async function runReportChild(args: readonly string[]): Promise<ReportChildFigures> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--expose-gc", REPORT_CHILD, ...args], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split("\n").pop()!) as ReportChildFigures;
}

/** The run of median wall time (of an odd number of runs). */
export function median<T extends { ms: number }>(runs: readonly T[]): T {
  return [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)]!;
}
