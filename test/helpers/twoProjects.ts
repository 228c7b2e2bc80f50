// Two projects synced into one store by the CLI: two simulators on 127.0.0.1 with different
// seeds (different histories, people and times) and one id seed, so that their audit record ids
// overlap, listed in a projects config whose keys come from environment variables.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "./inProcessCli.ts";
import type { CliOptions, CliResult } from "./runCli.ts";
import { daysAgo } from "./simSync.ts";

export const PROJECT_NAMES = ["eu", "us"] as const;
export type ProjectName = (typeof PROJECT_NAMES)[number];

export interface TwoProjects {
  sims: Record<ProjectName, RunningSimulator>;
  /** The flagtrail.config.json listing both. */
  config: string;
  /** What runCli needs: each project's key in its variable, fast retries, no rate wait. */
  env: Record<string, string>;
  /** `sync --config … --db <db> --since …` arguments, without the project. */
  syncArgs(db: string): string[];
}

/** Days of history each simulator holds, and the first day a sync asks for. */
const DAYS = 40;

export function writeProjectsConfig(projects: Record<string, unknown>): string {
  const path = join(mkdtempSync(join(tmpdir(), "flagtrail-config-")), "flagtrail.config.json");
  writeFileSync(path, JSON.stringify({ projects }, null, 2));
  return path;
}

/** Starts both simulators for each test (closed after it); `records` sizes eu's history, us has 2/3. */
export function useTwoProjects(records = 240): () => Promise<TwoProjects> {
  const running: RunningSimulator[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((sim) => sim.close()));
  });
  return async () => {
    const common = { host: "127.0.0.1", port: 0, idSeed: 4242, days: DAYS };
    const eu = await startSimulator({ ...common, seed: 11, records, apiKey: "eu-console-key-0001" });
    running.push(eu);
    const us = await startSimulator({
      ...common,
      seed: 12,
      records: Math.round((records * 2) / 3),
      apiKey: "us-console-key-0002",
    });
    running.push(us);
    const entry = (sim: RunningSimulator, variable: string) => ({
      apiKeyEnv: variable,
      baseUrl: sim.url,
      authHeader: sim.settings.authHeader,
    });
    const config = writeProjectsConfig({ eu: entry(eu, "EU_KEY"), us: entry(us, "US_KEY") });
    return {
      sims: { eu, us },
      config,
      env: {
        EU_KEY: eu.settings.apiKey,
        US_KEY: us.settings.apiKey,
        FLAGTRAIL_RATE_LIMITS: "100000/1000",
        FLAGTRAIL_RETRY_BASE_MS: "5",
        FLAGTRAIL_RETRY_THROTTLED_BASE_MS: "20",
        FLAGTRAIL_RETRY_MAX_DELAY_MS: "200",
      },
      syncArgs: (db) => [
        "sync",
        "--config",
        config,
        "--db",
        db,
        "--since",
        daysAgo(DAYS + 5),
        "--no-entities",
        "--quiet",
      ],
    };
  };
}

type Run = (args: readonly string[], options: Pick<CliOptions, "env">) => Promise<CliResult>;

/**
 * Syncs both projects into `db` (a file path or a postgres:// URL); throws unless it exits 0. In this
 * process unless `run` is runCli (test/integration/sync-projects.test.ts spawns it, end to end).
 */
export async function syncBoth(
  projects: TwoProjects,
  db: string,
  run: Run = runCliInProcess,
): Promise<CliResult> {
  const result = await run(projects.syncArgs(db), { env: projects.env });
  if (result.code !== 0) throw new Error(`sync of both projects failed: ${result.code} ${result.stderr}`);
  return result;
}
