// Start-up benchmark: how long `flagtrail --version`, `--help`, `status --help` and `status` of an empty
// SQLite store (a command that opens a store: its whole module graph) take as a user runs them
// (`node bin/flagtrail.js`, the compiled dist/), against `node -e 0` measured in the same run.
// dist/ is rebuilt first, so the figures are those of the current sources, never of a stale build.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openStore } from "../src/store/open.ts";
import { buildDist, compiledEnv, maxRssMb, PRINT_MAX_RSS, ROOT } from "./compiled.ts";

const BIN = fileURLToPath(new URL("../bin/flagtrail.js", import.meta.url));
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 11);

function runOnce(args: readonly string[]): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8", env: compiledEnv() });
  const ms = performance.now() - started;
  if (result.status !== 0)
    throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return ms;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function peakRssMb(args: readonly string[]): number {
  const result = spawnSync(process.execPath, ["--import", PRINT_MAX_RSS, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: compiledEnv(),
  });
  return maxRssMb(result.stderr);
}

export async function benchStartup(): Promise<Record<string, number>> {
  buildDist();
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-bench-startup-"));
  try {
    const db = join(dir, "empty.db");
    openStore(db).close();
    return measure({
      node: ["-e", "0"],
      version: [BIN, "--version"],
      help: [BIN, "--help"],
      status_help: [BIN, "status", "--help"],
      status: [BIN, "status", "--db", db],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Case = "node" | "version" | "help" | "status_help" | "status";

function measure(cases: Record<Case, readonly string[]>): Record<string, number> {
  const times: Record<Case, number[]> = { node: [], version: [], help: [], status_help: [], status: [] };
  // Interleaved, one run of each per round, so a burst of load on the machine hits all of them alike.
  for (const args of Object.values(cases)) runOnce(args); // warm the file cache
  for (let round = 0; round < RUNS; round++) {
    for (const [name, args] of Object.entries(cases)) times[name as Case].push(runOnce(args));
  }
  const nodeMs = median(times.node);
  return {
    version_vs_node_ratio: median(times.version) / nodeMs,
    help_vs_node_ratio: median(times.help) / nodeMs,
    status_help_vs_node_ratio: median(times.status_help) / nodeMs,
    status_empty_store_vs_node_ratio: median(times.status) / nodeMs,
    node_e0_ms: nodeMs,
    version_ms: median(times.version),
    help_ms: median(times.help),
    status_help_ms: median(times.status_help),
    status_empty_store_ms: median(times.status),
    node_e0_peak_rss_mb: peakRssMb(cases.node),
    version_peak_rss_mb: peakRssMb(cases.version),
    status_empty_store_peak_rss_mb: peakRssMb(cases.status),
  };
}
