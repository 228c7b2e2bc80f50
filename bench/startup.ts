// Start-up benchmark: how long `flagtrail --version`, `--help` and `status --help` take as a user runs
// them (`node bin/flagtrail.js`, the compiled dist/), against `node -e 0` measured in the same run.
// dist/ is rebuilt first, so the figures are those of the current sources, never of a stale build.
import { execFileSync, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BIN = fileURLToPath(new URL("../bin/flagtrail.js", import.meta.url));
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 11);
// Prints the process's peak RSS (KB) on stderr at exit, for the memory figure (not timed).
const PRINT_MAX_RSS =
  "data:text/javascript,process.on('exit',()=>process.stderr.write('MAXRSS '+process.resourceUsage().maxRSS+'\\n'))";

function build(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "inherit" });
}

function runOnce(args: readonly string[]): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8", env: cleanEnv() });
  const ms = performance.now() - started;
  if (result.status !== 0)
    throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return ms;
}

/** Without FLAGTRAIL_FROM_SOURCE, whatever the caller's shell has: the bin must run dist/. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.FLAGTRAIL_FROM_SOURCE;
  return env;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function maxRssMb(args: readonly string[]): number {
  const result = spawnSync(process.execPath, ["--import", PRINT_MAX_RSS, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: cleanEnv(),
  });
  const kb = /MAXRSS (\d+)/.exec(result.stderr)?.[1];
  if (kb === undefined) throw new Error(`no MAXRSS line from node ${args.join(" ")}`);
  return Number(kb) / 1024;
}

export async function benchStartup(): Promise<Record<string, number>> {
  build();
  const cases = {
    node: ["-e", "0"],
    version: [BIN, "--version"],
    help: [BIN, "--help"],
    status_help: [BIN, "status", "--help"],
  } as const;
  const times: Record<keyof typeof cases, number[]> = { node: [], version: [], help: [], status_help: [] };
  // Interleaved, one run of each per round, so a burst of load on the machine hits all of them alike.
  for (const args of Object.values(cases)) runOnce(args); // warm the file cache
  for (let round = 0; round < RUNS; round++) {
    for (const [name, args] of Object.entries(cases)) times[name as keyof typeof cases].push(runOnce(args));
  }
  const nodeMs = median(times.node);
  return {
    version_vs_node_ratio: median(times.version) / nodeMs,
    help_vs_node_ratio: median(times.help) / nodeMs,
    status_help_vs_node_ratio: median(times.status_help) / nodeMs,
    node_e0_ms: nodeMs,
    version_ms: median(times.version),
    help_ms: median(times.help),
    status_help_ms: median(times.status_help),
    node_e0_peak_rss_mb: maxRssMb(cases.node),
    version_peak_rss_mb: maxRssMb(cases.version),
  };
}
