// `flagtrail sync`: validate the options, resolve connection settings, run the sync engine under the
// "sync" lease, print a summary (text or JSON) on stdout and progress on stderr when it is a TTY.
import { z } from "zod";
import { rateShareSchema } from "../api/rateBudget.ts";
import { resolveClientTuning, resolveDbPath } from "../config.ts";
import { AbortedError, asDiskFull } from "../errors.ts";
import { previousSigningKeyFromEnv, signingKeyFromEnv } from "../signingKey.ts";
import { openProjectStore } from "../store/projectStores.ts";
import { createSyncClient } from "../sync/client.ts";
import type { EntitySummary } from "../sync/entities.ts";
import { resolveSyncOptions } from "../sync/options.ts";
import { runSync, type SyncOptions, type SyncSummary } from "../sync/runSync.ts";
import { actionTypeListOption, checkActionTypes } from "./actionTypes.ts";
import { keepHeapSmall } from "./heap.ts";
import { namingFlags, parseOptions, type SettingFlags, storeOptionsShape } from "./options.ts";
import {
  describeFailure,
  forEachProject,
  type ProjectOutcome,
  resolveSyncTargets,
  type SyncTarget,
  throwIfFailed,
} from "./project.ts";
import { progressReporter } from "./syncProgress.ts";

// The command line gives text: here it only becomes a number. What a value may be (range, default, a
// day's form) is the engine's rule alone (src/sync/options.ts), so its sentence is the one a config file
// or the daemon gets too.
const wholeNumber = z.string().regex(/^\d+$/, { message: "expected a whole number" }).transform(Number);

// A share of the rate limits; its range is the client's rule (rateShareSchema).
const shareText = z
  .string()
  .regex(/^\d*\.?\d+$/, { message: "expected a number such as 0.5" })
  .transform(Number)
  .pipe(rateShareSchema);

/** The sync options shared by `sync` and `daemon` (commander registers them in register/sync.ts). */
export const syncOptionsShape = {
  since: z.string().optional(),
  until: z.string().optional(),
  actionType: actionTypeListOption,
  allowUnknownActionTypes: z.boolean().default(false),
  allowBefore2015: z.boolean().default(false),
  ...storeOptionsShape,
  pageSize: wholeNumber.optional(),
  concurrency: wholeNumber.optional(),
  lookbackDays: wholeNumber.optional(),
  full: z.boolean().default(false),
  coverage: z.boolean().default(true),
  entities: z.boolean().optional(),
  entitiesOnly: z.boolean().optional(),
  entityBudget: wholeNumber.optional(),
  rateShare: shareText.optional(),
  event: z.array(z.string().trim().min(1)).optional(),
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
  apiKeyFile: z.string().min(1).optional(),
  authHeader: z.string().optional(),
  config: z.string().min(1).optional(),
  project: z.string().min(1).optional(),
  json: z.boolean().default(false),
  quiet: z.boolean().default(false),
};

/** The flags of the settings the sync engine refuses by name (resolveSyncOptions); the daemon's too. */
export const SYNC_FLAGS: SettingFlags = {
  "start day": "--since",
  "end day": "--until",
  period: "--since/--until",
  "earlier start": "--allow-before-2015",
  "entity history": "--no-entities",
  "entities only": "--entities-only",
  "page size": "--page-size",
  concurrency: "--concurrency",
  lookback: "--lookback-days",
};

// The range itself (start after end, an end after tomorrow…) is the engine's rule: resolveSyncOptions.
const syncOptionsSchema = z.object(syncOptionsShape);

type SyncCliOptions = z.infer<typeof syncOptionsSchema>;

/** The engine's options from the command-line ones (shared with the daemon). */
export function runSyncOptionsFrom(options: z.infer<z.ZodObject<typeof syncOptionsShape>>): SyncOptions {
  return {
    since: options.since,
    until: options.until,
    actionTypes: options.actionType,
    pageSize: options.pageSize,
    concurrency: options.concurrency,
    lookbackDays: options.lookbackDays,
    full: options.full,
    coverage: options.coverage,
    allowBefore2015: options.allowBefore2015,
    entities: options.entities,
    entitiesOnly: options.entitiesOnly,
    entityBudget: options.entityBudget,
    events: options.event,
    signingKey: signingKeyFromEnv(),
    previousSigningKey: previousSigningKeyFromEnv(),
  };
}

function formatEntities(e: EntitySummary): string {
  const gone = e.notFound.length > 0 ? `, not found ${e.notFound.length}` : "";
  const refused = e.forbidden ? ", refused (HTTP 403)" : "";
  const budget = e.budget === null ? "" : ` (budget ${e.budget})`;
  const pending = e.pending > 0 ? `, pending ${e.pending} (read first by the next syncs)` : "";
  return (
    `  entities: requests ${e.requests}${budget}, configs ${e.configs} (new versions ${e.newVersions}, mutated ${e.mutatedVersions.length}), ` +
    `layers ${e.layers} (experiment snapshots ${e.experimentSnapshots}), events ${e.events} (metric snapshots ${e.metricSnapshots})${gone}${refused}${pending}`
  );
}

export function formatSummary(summary: SyncSummary): string {
  const filter = summary.actionTypes.length > 0 ? summary.actionTypes.join(", ") : "all action types";
  const verb = summary.outcome === "ok" ? "Synced" : "Interrupted sync of";
  const lines = [
    `${verb} ${summary.range.since} .. ${summary.range.until} (${filter}) in ${summary.seconds} s${summary.resumed ? ", resumed an interrupted run" : ""}`,
    `  fetched ${summary.fetched}, new ${summary.inserted}, duplicates ${summary.duplicates}, mutations ${summary.mutations}, quarantined ${summary.quarantined}, warnings ${summary.warnings}`,
    `  requests ${summary.requests} (${summary.coverageRequests} of them for coverage), retries ${summary.retries}, 429s received ${summary.throttled}, page size ${summary.pageSize}, windows ${summary.windows}`,
    `  coverage ${summary.coverageDays} days, days with gaps ${summary.coverageGaps.length}`,
  ];
  if (summary.coverageOpenDays.length > 0) {
    lines.push(
      `  open days ${summary.coverageOpenDays.join(", ")}: the server's day had not ended, counts are not final (checked again by the next sync)`,
    );
  }
  for (const gap of summary.coverageGaps.slice(0, 10)) {
    lines.push(`  gap ${gap.day}: ${gap.local} stored, server says ${gap.server}`);
  }
  if (summary.coverageGaps.length > 10)
    lines.push(`  … ${summary.coverageGaps.length - 10} more days with gaps`);
  if (summary.entities) lines.push(formatEntities(summary.entities));
  for (const warning of summary.warningMessages.slice(0, 5)) lines.push(`  warning: ${warning}`);
  return `${lines.join("\n")}\n`;
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  keepHeapSmall();
  const options = parseOptions(syncOptionsSchema, raw);
  checkActionTypes(options.actionType, options.allowUnknownActionTypes);
  // The engine's checks of the range, before a store file is created for a run that cannot start.
  const { concurrency } = namingFlags(SYNC_FLAGS, () => resolveSyncOptions(runSyncOptionsFrom(options)));
  const targets = resolveSyncTargets(options, resolveClientTuning());
  const dbPath = resolveDbPath(options);
  // Projects share --concurrency: as many run at once as it allows, each with its share of requests.
  const slots = Math.min(targets.length, concurrency);
  const share = Math.max(1, Math.floor(concurrency / slots));
  const several = targets.length > 1;

  const controller = new AbortController();
  const stop = () => controller.abort(new AbortedError("stopped by signal"));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const byName = new Map(targets.map((t) => [t.project.name, t]));
    const outcomes = await forEachProject([...byName.keys()], slots, async (name) => {
      const target = byName.get(name) as SyncTarget;
      const run = { ...options, concurrency: share };
      return await syncProject(target, dbPath, run, several ? name : undefined, controller.signal);
    });
    // The summary names each project's outcome; the closing sentence (stderr) the failed ones.
    process.stdout.write(formatOutcomes(outcomes, options.json, several));
    throwIfFailed(outcomes);
    if (outcomes.some((o) => o.ok && o.value.outcome === "interrupted")) {
      throw new AbortedError(
        "The sync was interrupted; everything fetched so far is stored. Run it again to resume.",
      );
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/** One project's sync into its part of the store, with its own client and rate budget. */
async function syncProject(
  target: SyncTarget,
  dbPath: string,
  options: SyncCliOptions,
  label: string | undefined,
  signal: AbortSignal,
): Promise<SyncSummary> {
  const { project, tuning } = target;
  // Read when the project runs: a project whose key is missing fails alone.
  const config = { baseUrl: project.baseUrl, authHeader: project.authHeader, apiKey: project.readApiKey() };
  const store = await openProjectStore(dbPath, project.name);
  const report = progressReporter(options.quiet, label);
  const client = createSyncClient(config, tuning, report.onRetry);
  try {
    const syncOptions = { ...runSyncOptionsFrom(options), entityBudget: target.entityBudget };
    return await runSync(store, client, { ...syncOptions, onEvent: report.onEvent }, signal);
  } catch (error) {
    // SQLITE_FULL is the driver's code, which the engine passes through: name the file it filled.
    throw asDiskFull(error, store.location) ?? error;
  } finally {
    report.finish();
    await client.close();
    await store.close();
  }
}

/** The summaries on stdout: one project's as before; several under their names (or one JSON object). */
function formatOutcomes(
  outcomes: readonly ProjectOutcome<SyncSummary>[],
  json: boolean,
  several: boolean,
): string {
  if (!several) {
    const [only] = outcomes;
    if (!only?.ok) return "";
    return json ? `${JSON.stringify(only.value, null, 2)}\n` : formatSummary(only.value);
  }
  if (json) {
    const projects = outcomes.map((o) =>
      o.ok
        ? { project: o.project, summary: o.value }
        : { project: o.project, error: describeFailure(o.error, o.project) },
    );
    return `${JSON.stringify({ projects }, null, 2)}\n`;
  }
  return outcomes
    .map((o) =>
      o.ok
        ? `Project ${o.project}\n${formatSummary(o.value)}`
        : `Project ${o.project}\n  failed: ${describeFailure(o.error, o.project)}\n`,
    )
    .join("");
}
