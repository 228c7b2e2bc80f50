// Pieces of the crash and fault campaign (issue 13): its scale, kill -9 of a real CLI process at a
// chosen moment, read-only probes of the store, and the figures table the full run prints.
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { Prng } from "../../src/simulator/prng.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { type CliResult, PROJECT_ROOT, runCli } from "../helpers/runCli.ts";
import { compareWithSimulator, withDb } from "../helpers/simSync.ts";

export type CampaignScale = "short" | "full";

export const SCALE: CampaignScale = process.env.CAMPAIGN_SCALE === "full" ? "full" : "short";

/** Sizes per scale: the full run is `npm run test:campaign`, the short one runs in `npm test`. */
export const SIZES = {
  short: {
    records: 500,
    days: 8,
    syncKills: 3,
    reportKills: 2,
    daemonKills: 2,
    faultRecords: 200,
    faultDays: 4,
  },
  full: {
    records: 25_000,
    days: 80,
    syncKills: 50,
    reportKills: 12,
    daemonKills: 10,
    faultRecords: 4000,
    faultDays: 30,
  },
}[SCALE];

/**
 * Per test: the full scale runs for minutes, the short one for seconds (given the suite's 240 s: 120 s
 * ran out on a loaded machine).
 */
export const TIMEOUT = SCALE === "full" ? 900_000 : 240_000;

/** Seed of the kill moments (and of the simulators): CAMPAIGN_SEED replays a run. */
export const SEED = Number(process.env.CAMPAIGN_SEED ?? 13);
export const random = new Prng(SEED, 3);

/** Requests the client made, as the simulator counted them (control routes excluded). */
export function requestsMade(sim: RunningSimulator): number {
  return Object.values(sim.control.counters().requests).reduce((a, b) => a + b, 0);
}

/**
 * Runs the CLI and SIGKILLs it once `armed()` holds and `delayMs` more have passed (immediately
 * armed: a delay from the spawn). Resolves with the result; `killed` says whether the kill landed
 * before the process ended on its own.
 */
export async function runAndKill(
  args: string[],
  env: Record<string, string>,
  delayMs: number,
  armed: () => boolean = () => true,
): Promise<CliResult & { killed: boolean }> {
  let child: ChildProcess | undefined;
  let finished = false;
  const done = runCli(args, {
    env,
    timeoutMs: 120_000,
    onSpawn: (c) => {
      child = c;
    },
  }).then((result) => {
    finished = true;
    return result;
  });
  const waitArmed = async () => {
    while (!finished && !armed()) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (!finished) child?.kill("SIGKILL");
  };
  const [result] = await Promise.all([done, waitArmed()]);
  return { ...result, killed: result.signal === "SIGKILL" };
}

/** `PRAGMA integrity_check` of the store, "ok" when sound. */
export function integrity(db: string): string {
  return withDb(
    db,
    (d) => (d.pragma("integrity_check") as { integrity_check: string }[])[0]!.integrity_check,
  );
}

/** The checkpoint rows, as text to compare before and after a run. */
export function checkpoints(db: string): string {
  return withDb(db, (d) => JSON.stringify(d.prepare("SELECT * FROM checkpoints ORDER BY 1").all()));
}

export function storedIdSet(db: string): Set<string> {
  return withDb(
    db,
    (d) =>
      new Set([
        ...(d.prepare("SELECT id FROM audit_logs").pluck().all() as string[]),
        ...(d.prepare("SELECT record_id FROM quarantine").pluck().all() as string[]),
      ]),
  );
}

/** Whether a column exists (schemas move while the engine is rewritten). */
export function hasColumn(db: string, table: string, column: string): boolean {
  return withDb(db, (d) =>
    (d.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]).includes(column),
  );
}

/** Exact set equality of the store (records + quarantine) with the simulator's records. */
export function setEquality(sim: RunningSimulator, db: string) {
  const compared = compareWithSimulator(sim, db);
  return {
    ...compared,
    equal:
      compared.storeCount === compared.simulatorCount &&
      compared.distinct === compared.storeCount &&
      compared.unknownToSimulator.length === 0,
  };
}

/** First line of stderr, and whether stderr looks like a stack trace. */
export function stderrShape(stderr: string): { firstLine: string; lines: number; stackTrace: boolean } {
  const lines = stderr.split("\n").filter((line) => line.trim() !== "");
  return {
    firstLine: lines[0] ?? "",
    lines: lines.length,
    stackTrace: /^\s+at .+[:(]/m.test(stderr) || /\bError: .*\n\s+at /.test(stderr),
  };
}

/** Where each campaign file leaves its figures; the full run's teardown merges them (summary.ts). */
export const FIGURES_DIR =
  SCALE === "full"
    ? join(PROJECT_ROOT, "reports", "campaign-full")
    : join(tmpdir(), "flagtrail-campaign-short");

export type FigureRow = { case: string; outcome: string } & Record<string, unknown>;

/** Writes one campaign file's rows of figures (a JSON array named after the part). */
export function writeFigures(part: string, rows: FigureRow[]): void {
  mkdirSync(FIGURES_DIR, { recursive: true });
  writeFileSync(join(FIGURES_DIR, `${part}.json`), `${JSON.stringify(rows, null, 2)}\n`);
}

/** Store ids all known to the simulator, none twice, and the file sound; returns how many. */
export function assertSoundSubset(sim: RunningSimulator, db: string): number {
  if (!existsSync(db)) return 0; // killed before the store was created
  expect(integrity(db)).toBe("ok");
  const compared = compareWithSimulator(sim, db);
  expect(compared.unknownToSimulator).toEqual([]);
  expect(compared.distinct).toBe(compared.storeCount);
  return compared.storeCount;
}

/** `flagtrail verify` on the store: exit 0, nothing on stderr. */
export async function assertVerifyOk(db: string, extra: string[] = []): Promise<void> {
  const verify = await runCliInProcess(["verify", "--db", db, ...extra]);
  expect(verify.stderr).toBe("");
  expect(verify.code).toBe(0);
}

/** The `retries` figure of the last run, when the engine records it (issue 13, defect 8). */
export function lastRunRetries(db: string): number | "no column" {
  if (!hasColumn(db, "sync_runs", "retries")) return "no column";
  return withDb(
    db,
    (d) => d.prepare("SELECT retries FROM sync_runs ORDER BY id DESC LIMIT 1").pluck().get() as number,
  );
}
