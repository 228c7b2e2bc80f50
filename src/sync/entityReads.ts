// One entity read of a pass: the list it asks for, typed by its kind, through the budgeted lister. A
// read the budget cuts short is null (left to a later run); a failure after all retries stops the pass.
import {
  type EntityLister,
  listConfigVersions,
  listEventMetrics,
  listLayerExperiments,
} from "../api/entities.ts";
import { AbortedError, ApiError } from "../errors.ts";
import { storedVersionKeys } from "../store/syncStore.ts";
import { BudgetSpent } from "./entityBudget.ts";
import type { DueRead } from "./entityDue.ts";
import { StopEntities, warn } from "./entitySummary.ts";
import type { SyncRun } from "./run.ts";

/** A read's answer, typed by its kind. */
export type Fetched =
  | { kind: "config_versions"; result: Awaited<ReturnType<typeof listConfigVersions>> }
  | { kind: "layer_experiments"; result: Awaited<ReturnType<typeof listLayerExperiments>> }
  | { kind: "event_metrics"; result: Awaited<ReturnType<typeof listEventMetrics>> };

/** The items of a read of kind K that ended ok. */
export type OkItems<K extends Fetched["kind"]> = Extract<
  Extract<Fetched, { kind: K }>["result"],
  { status: "ok" }
>["items"];

async function readOf(
  run: SyncRun,
  lister: EntityLister,
  due: DueRead,
  signal: AbortSignal,
): Promise<Fetched> {
  const { kind, key } = due;
  const options = { signal };
  if (kind === "config_versions") {
    // The versions stored already: a long history is read only as far as the new ones.
    const known = await storedVersionKeys(run.store, key);
    return { kind, result: await listConfigVersions(lister, key, { ...options, known }) };
  }
  if (kind === "layer_experiments")
    return listLayerExperiments(lister, key, options).then((result) => ({ kind, result }));
  return listEventMetrics(lister, key, options).then((result) => ({ kind, result }));
}

/** One read: its answer, or null when the budget ran out before it ended; a failure stops the pass. */
export async function fetchEntity(
  run: SyncRun,
  lister: EntityLister,
  entity: DueRead,
  signal: AbortSignal,
): Promise<Fetched | null> {
  const { kind, key } = entity;
  try {
    return await readOf(run, lister, entity, signal);
  } catch (error) {
    if (error instanceof BudgetSpent) return null;
    if (signal.aborted || error instanceof AbortedError || !(error instanceof ApiError)) throw error;
    warn(
      run,
      `Entity history stopped at ${kind.replace("_", " ")} of ${key}: ${error.message} The next sync tries again.`,
    );
    throw new StopEntities();
  }
}
