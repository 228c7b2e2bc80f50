// `flagtrail daemon`: the scheduled worker. Each cycle is a sync, optionally followed by the report of
// the previous day, week or month. `--once` runs one cycle now (for system cron, timers and CI).

import { join } from "node:path";
import { z } from "zod";
import { resolveClientTuning, resolveDbPath } from "../config.ts";
import type { CheckConfig } from "../controls/check.ts";
import type { Control } from "../controls/config.ts";
import { checkAfterFailedSync, checkAndDeliver, daemonControls } from "../controls/cycle.ts";
import { needsAttention } from "../daemon/attention.ts";
import { previousPeriod, type ReportCadence, todayIn } from "../daemon/periods.ts";
import {
  type Cycle,
  type CycleOutcome,
  DAEMON_LAST_CYCLE_KEY,
  runOnce,
  runWorker,
  validateSchedule,
} from "../daemon/worker.ts";
import { AbortedError, FlagtrailError } from "../errors.ts";
import { createLogger, type Logger, withFields } from "../log.ts";
import { DEFAULT_PROJECT } from "../projects.ts";
import { writeReports } from "../report/writeReports.ts";
import { previousSigningKeyFromEnv, signingKeyFromEnv } from "../signingKey.ts";
import { openProjectStore } from "../store/projectStores.ts";
import { leaseHolder, readCheckpoint, type Store, writeMetaValue } from "../store/syncStore.ts";
import { createSyncClient } from "../sync/client.ts";
import { resolveSyncOptions } from "../sync/options.ts";
import { filterKeyFor } from "../sync/plan.ts";
import { runSync } from "../sync/runSync.ts";
import { checkActionTypes } from "./actionTypes.ts";
import { keepHeapSmall } from "./heap.ts";
import { namingFlags, parseOptions } from "./options.ts";
import { forEachProject, resolveSyncTargets, type SyncTarget, throwIfFailed } from "./project.ts";
import { reportFormatsOption } from "./report.ts";
import { runSyncOptionsFrom, SYNC_FLAGS, syncOptionsShape } from "./sync.ts";
import { syncEventLog } from "./syncLog.ts";

const daemonOptionsSchema = z.object({
  ...syncOptionsShape,
  cron: z.string().trim().min(1).default("0 2 * * *"),
  tz: z.string().trim().min(1).default("UTC"),
  report: z.enum(["daily", "weekly", "monthly"], { message: "expected daily, weekly or monthly" }).optional(),
  out: z.string().min(1).default("reports"),
  format: reportFormatsOption,
  once: z.boolean().default(false),
  leaseTtl: z
    .string()
    .regex(/^\d+$/, { message: "expected a whole number of seconds" })
    .transform((s) => Number(s) * 1000)
    .refine((ms) => ms >= 5_000, { message: "must be at least 5 seconds" })
    .default(600_000),
});

type DaemonOptions = z.infer<typeof daemonOptionsSchema>;

export async function action(raw: Record<string, unknown>): Promise<void> {
  keepHeapSmall();
  const options = parseOptions(daemonOptionsSchema, raw);
  checkActionTypes(options.actionType, options.allowUnknownActionTypes);
  const { concurrency } = namingFlags(SYNC_FLAGS, () => resolveSyncOptions(runSyncOptionsFrom(options)));
  namingFlags({ schedule: "--cron", "time zone": "--tz" }, () => validateSchedule(options.cron, options.tz));
  const targets = resolveSyncTargets(options, resolveClientTuning());
  const dbPath = resolveDbPath(options);
  // Controls are read (and a bad list refused) before the first cycle, not at its end.
  const found = daemonControls(options.config);
  // The integrity control checks the chain head's signature with the key verify uses (the log masks it).
  const controls = found && { ...found, signingKey: signingKeyFromEnv() };
  // Every key is read now, so that the log masks each; a project whose key is missing fails alone.
  const keys = new Map<string, string | Error>();
  for (const { project } of targets) {
    try {
      keys.set(project.name, project.readApiKey());
    } catch (error) {
      if (targets.length === 1) throw error;
      keys.set(project.name, error as Error);
    }
  }
  const log = createLogger({
    secrets: [
      ...[...keys.values()].filter((k) => typeof k === "string"),
      signingKeyFromEnv(),
      previousSigningKeyFromEnv(),
    ],
    // --json forces JSON lines even on a terminal; without it they are chosen when stderr is not a TTY.
    ...(options.json ? { json: true } : {}),
    quiet: options.quiet,
  });
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    log.info("signal", { signal });
    stop.abort();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // One worker per project, all in this process: each with its own lease, schedule ticks and share of
  // --concurrency, so one project's failure or held lease never stalls another's.
  const several = targets.length > 1;
  const share = Math.max(1, Math.floor(concurrency / targets.length));
  const byName = new Map(targets.map((t) => [t.project.name, t]));
  try {
    const outcomes = await forEachProject([...byName.keys()], targets.length, async (name) => {
      const key = keys.get(name);
      if (key instanceof Error) throw key;
      const projectLog = several ? withFields(log, { project: name }) : log;
      const run = { ...options, concurrency: several ? share : concurrency };
      try {
        await serveProject(
          byName.get(name) as SyncTarget,
          key as string,
          dbPath,
          run,
          projectLog,
          stop.signal,
          controls,
        );
      } catch (error) {
        if (several)
          projectLog.error("project.failed", {
            error: error instanceof Error ? error.message : String(error),
          });
        throw error;
      }
    });
    throwIfFailed(outcomes);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** One project's worker (or, with --once, one cycle) on its part of the store. */
async function serveProject(
  target: SyncTarget,
  apiKey: string,
  dbPath: string,
  options: DaemonOptions,
  log: Logger,
  stop: AbortSignal,
  controls: CheckConfig | null,
): Promise<void> {
  const { project, tuning } = target;
  const config = { baseUrl: project.baseUrl, authHeader: project.authHeader, apiKey };
  const events = syncEventLog(log);
  // Reports of a project other than default go to a folder of its own under --out.
  const outDir = project.name === DEFAULT_PROJECT ? options.out : join(options.out, project.name);
  const store = await openProjectStore(dbPath, project.name);
  const cycle: Cycle = async (signal) => {
    // A fresh client per cycle: a nightly worker must not keep sockets open for a day.
    const client = createSyncClient(config, tuning, events.onRetry);
    try {
      const summary = await runSync(
        store,
        client,
        {
          ...(await cycleSyncOptions(store, options)),
          entityBudget: target.entityBudget,
          onEvent: events.onEvent,
        },
        signal,
      ).catch(async (error: unknown) => {
        await afterFailedSync({ project: project.name, store }, controls, error, log, signal);
        throw error;
      });
      const fields: Record<string, unknown> = {
        runId: summary.runId,
        outcome: summary.outcome,
        fetched: summary.fetched,
        inserted: summary.inserted,
        duplicates: summary.duplicates,
        mutations: summary.mutations,
        quarantined: summary.quarantined,
        requests: summary.requests,
        throttled: summary.throttled,
        gaps: summary.coverageGaps.length,
      };
      if (options.report && summary.outcome === "ok" && !signal.aborted) {
        fields.report = await writePeriodReport(
          { ...options, out: outDir },
          options.report,
          store,
          project.name,
          controls?.controls ?? null,
          log,
        );
      }
      const delivery =
        controls && summary.outcome === "ok" && !signal.aborted
          ? await checkAndDeliver({ project: project.name, store }, controls, signal)
          : undefined;
      if (delivery) fields.controls = delivery;
      const attention = needsAttention(summary.coverageGaps, delivery);
      if (attention) log.warn("cycle.warning", attention);
      return { ok: summary.outcome === "ok", fields };
    } finally {
      await client.close();
    }
  };

  const holder = leaseHolder("daemon");
  const deps = { store, cycle, log, onOutcome: (outcome: CycleOutcome) => recordLastCycle(store, outcome) };
  try {
    if (options.once) {
      const outcome = await runOnce(deps, { holder, leaseTtlMs: options.leaseTtl }, stop);
      if (outcome.interrupted)
        throw new AbortedError(
          "The cycle was interrupted; everything fetched so far is stored. Run it again to resume.",
        );
      if (!outcome.ok)
        throw new FlagtrailError(`The cycle failed: ${String(outcome.fields.error ?? "see the log")}`);
    } else {
      await runWorker(
        deps,
        { cron: options.cron, timezone: options.tz, holder, leaseTtlMs: options.leaseTtl },
        stop,
      );
    }
  } finally {
    await store.close();
  }
}

/** After a failed sync, the freshness controls (checkAfterFailedSync); their own failure is logged, the sync's error stands. */
async function afterFailedSync(
  part: { project: string; store: Store },
  controls: CheckConfig | null,
  failure: unknown,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  if (controls === null || signal.aborted) return;
  try {
    const result = await checkAfterFailedSync(part, controls, failure, signal);
    if (result) log.warn("cycle.controls", { controls: result });
  } catch (error) {
    log.error("cycle.controls", { error: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * A cycle's sync options. `--since` starts the worker's history: once the store holds a checkpoint for
 * the filter set, a cycle continues from it like a nightly sync (an explicit start day would re-read the
 * whole range at every tick).
 */
async function cycleSyncOptions(store: Store, options: DaemonOptions) {
  const syncOptions = runSyncOptionsFrom(options);
  if (syncOptions.since === undefined) return syncOptions;
  const checkpoint = await readCheckpoint(store, filterKeyFor(syncOptions.actionTypes ?? []));
  return checkpoint === undefined ? syncOptions : { ...syncOptions, since: undefined };
}

/** The last cycle's outcome (sync and report), for `flagtrail status`. */
async function recordLastCycle(store: Store, outcome: CycleOutcome): Promise<void> {
  const { ok, interrupted } = outcome;
  const value = JSON.stringify({
    at: new Date().toISOString(),
    ok,
    ...(interrupted ? { interrupted } : {}),
    ...outcome.fields,
  });
  await writeMetaValue(store, DAEMON_LAST_CYCLE_KEY, value);
}

async function writePeriodReport(
  options: DaemonOptions,
  cadence: ReportCadence,
  store: Store,
  project: string,
  controls: readonly Control[] | null,
  log: Logger,
): Promise<Record<string, unknown>> {
  const period = previousPeriod(cadence, todayIn(options.tz));
  const result = await writeReports({
    store,
    project,
    from: period.from,
    to: period.to,
    timeZone: options.tz,
    outDir: options.out,
    actionTypes: options.actionType,
    formats: options.format,
    // A cycle re-run for the same period (a restart, --once twice) replaces it; the manifest says so.
    force: true,
    controls,
    signingKey: signingKeyFromEnv(),
  });
  if (result.replacedSignature) log.warn("report.signature_replaced", { manifest: result.manifestPath });
  return { from: period.from, to: period.to, manifest: result.manifestPath, records: result.counts.records };
}
