// What an entity pass reads, in the order its budget spends on it: the configs and layers the most
// recent records named first (the store's due-lists decide what is due), then events.
import { EXPERIMENT_STATE_CHANGES } from "../api/actionCategories.ts";
import type { EntityKind } from "../api/entities.ts";
import { EXPERIMENT_LAYER_MOVES, LAYER_ACTIONS } from "../api/entityActions.ts";
import { configsDueForVersions, layersDueForExperiments } from "../store/syncStore.ts";
import { eventsDueForMetrics } from "./metricEvents.ts";
import type { SyncRun } from "./run.ts";

/** An entity due for a read. */
export interface DueRead {
  kind: EntityKind;
  key: string;
  /** The newest audit record naming it (0 for events). */
  newest: number;
}

/** Every kind an entity pass reads (and rewrites the backlog of). */
export const KINDS: readonly EntityKind[] = ["config_versions", "layer_experiments", "event_metrics"];

export const dueKey = (due: { kind: string; key: string }) => `${due.kind}\u0000${due.key}`;

/** Everything due, in the order the budget spends on it: configs and layers most recently named first, then events. */
export async function dueReads(run: SyncRun): Promise<DueRead[]> {
  const { store, options } = run;
  const configs = (await configsDueForVersions(store)).map(
    (d): DueRead => ({ kind: "config_versions", key: d.name, newest: d.newest }),
  );
  const layers = (
    await layersDueForExperiments(store, LAYER_ACTIONS, EXPERIMENT_STATE_CHANGES, EXPERIMENT_LAYER_MOVES)
  ).map((d): DueRead => ({ kind: "layer_experiments", key: d.name, newest: d.newest }));
  const events = (await eventsDueForMetrics(store, options.events)).map(
    (name): DueRead => ({ kind: "event_metrics", key: name, newest: 0 }),
  );
  // Stable sort: within one newest seq, configs before layers, each kind in its query's order.
  return [...[...configs, ...layers].sort((a, b) => b.newest - a.newest), ...events];
}
