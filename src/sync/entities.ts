// The entity part of a sync, run once after the audit log part: the version history of every dynamic
// config with a config edit stored since its versions were last read (a run without one makes no
// version request), the experiments of the layers the audit log names, and the metrics of the events
// read before or named by the caller. Same client, so the same rate budget and retry rules, and reads
// `concurrency` at a time like the audit pages (stored in order). At most a budget of requests: the
// most recently edited configs and layers first, then older ones, then events; what is left is saved as
// the backlog, which later runs read first (it stays due). A 404 is recorded and the run goes on; the
// first 403 is reported once and ends the entity reads (the audit records are already committed, so the
// run still succeeds).

import { EXPERIMENT_STATE_CHANGES } from "../api/actionCategories.ts";
import type { ConsoleClient } from "../api/client.ts";
import type { ConsoleApiClient } from "../api/consoleClient.ts";
import {
  type EntityKind,
  type EntityLister,
  listConfigVersions,
  listEventMetrics,
  listLayerExperiments,
} from "../api/entities.ts";
import { EXPERIMENT_LAYER_MOVES, LAYER_ACTIONS } from "../api/entityActions.ts";
import { AbortedError, ApiError } from "../errors.ts";
import {
  configsDueForVersions,
  eventsDueForMetrics,
  layersDueForExperiments,
  linkAndDiffConfig,
  type MutatedVersion,
  quarantineEntityItems,
  recordEntityFetch,
  saveEntityBacklog,
  storeConfigVersions,
  storeExperimentSnapshots,
  storeMetricSnapshots,
} from "../store/syncStore.ts";
import { SYNC_DEFAULTS } from "./defaults.ts";
import { runPool } from "./pool.ts";
import type { SyncRun } from "./run.ts";

/** What the entity part did, in the sync's summary. */
export interface EntitySummary {
  configs: number;
  newVersions: number;
  /** Versions that came back with other content under the same number. */
  mutatedVersions: MutatedVersion[];
  layers: number;
  experimentSnapshots: number;
  events: number;
  metricSnapshots: number;
  /** Entities the service says do not exist (404), as kind:key. */
  notFound: string[];
  /** The key lacks the scope of the entity reads (403): they stopped there. */
  forbidden: boolean;
  /** Items that failed their schema (counted, not stored). */
  invalid: number;
  /** Requests the entity reads sent, retries included (also in the run's total). */
  requests: number;
  /** The run's entity request budget (null: none). */
  budget: number | null;
  /** Entities due but left unread (the budget was spent, or the reads stopped): the backlog. */
  pending: number;
}

const hasListPage = (client: ConsoleClient): client is ConsoleApiClient =>
  typeof (client as Partial<ConsoleApiClient>).listPage === "function";

/** Stops the entity reads: a 403, or a failure after all retries. */
class StopEntities extends Error {}

/** A page the budget has no room for: the read it belongs to is left to a later run. */
class BudgetSpent extends Error {}

/** An entity due for a read. */
interface DueRead {
  kind: EntityKind;
  key: string;
  /** The newest audit record naming it (0 for events). */
  newest: number;
}

const KINDS: readonly EntityKind[] = ["config_versions", "layer_experiments", "event_metrics"];

/** A read's answer, typed by its kind. */
type Fetched =
  | { kind: "config_versions"; result: Awaited<ReturnType<typeof listConfigVersions>> }
  | { kind: "layer_experiments"; result: Awaited<ReturnType<typeof listLayerExperiments>> }
  | { kind: "event_metrics"; result: Awaited<ReturnType<typeof listEventMetrics>> };

type Ok<F extends Fetched> = Extract<F["result"], { status: "ok" }>["items"];

function readOf(lister: EntityLister, { kind, key }: DueRead, signal: AbortSignal): Promise<Fetched> {
  const options = { signal };
  if (kind === "config_versions")
    return listConfigVersions(lister, key, options).then((result) => ({ kind, result }));
  if (kind === "layer_experiments")
    return listLayerExperiments(lister, key, options).then((result) => ({ kind, result }));
  return listEventMetrics(lister, key, options).then((result) => ({ kind, result }));
}
const dueKey = (due: { kind: string; key: string }) => `${due.kind}\u0000${due.key}`;

const emptySummary = (): EntitySummary => ({
  configs: 0,
  newVersions: 0,
  mutatedVersions: [],
  layers: 0,
  experimentSnapshots: 0,
  events: 0,
  metricSnapshots: 0,
  notFound: [],
  forbidden: false,
  invalid: 0,
  requests: 0,
  budget: null,
  pending: 0,
});

export async function syncEntities(run: SyncRun): Promise<EntitySummary | null> {
  const { client, options } = run;
  if (!options.entities || !hasListPage(client) || run.signal.aborted) return null;
  run.refreshClientStats();
  const pass = new EntityPass(run, client, budgetOf(run, run.counters.requests));
  const requestsBefore = client.stats().requests;
  const due = await dueReads(run);
  try {
    await pass.readAll(due);
  } catch (error) {
    if (!(error instanceof StopEntities)) throw error;
  }
  const summary = pass.summary;
  summary.requests = client.stats().requests - requestsBefore;
  const unread = due.filter((entity) => !pass.caughtUp.has(dueKey(entity)));
  summary.pending = unread.length;
  if (!run.signal.aborted) {
    const backlog = unread.map((entity) => ({
      kind: entity.kind,
      key: entity.key,
      newestSeq: entity.newest,
    }));
    await saveEntityBacklog(run.store, KINDS, backlog, { runId: run.runId, now: run.now() });
  }
  run.emit({ type: "entities", pass: "configs", read: summary.configs });
  run.emit({ type: "entities", pass: "layers", read: summary.layers });
  run.emit({ type: "entities", pass: "events", read: summary.events });
  const mutated = summary.mutatedVersions;
  if (mutated.length > 0) {
    const named = mutated
      .slice(0, 5)
      .map((m) => `${m.configKey} v${m.version}`)
      .join(", ");
    warn(
      run,
      `${mutated.length} config version(s) came back with other content under the same number (kept as revisions): ${named}${mutated.length > 5 ? ", …" : ""}.`,
    );
  }
  return summary;
}

/** The budget of this run: as given; unset, the audit part's requests but at least the floor (none when reading entities alone). */
function budgetOf(run: SyncRun, auditRequests: number): number | null {
  const { entityBudget, entitiesOnly } = run.options;
  if (entityBudget !== undefined) return entityBudget;
  if (entitiesOnly) return null;
  return Math.max(SYNC_DEFAULTS.entityBudgetFloor, auditRequests);
}

/** Everything due, in the order the budget spends on it: configs and layers most recently named first, then events. */
async function dueReads(run: SyncRun): Promise<DueRead[]> {
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

/** One entity pass of a run: reads up to `concurrency` at once within the budget, each stored in due order. */
class EntityPass {
  readonly summary = emptySummary();
  /** Entities whose read ended ok or 404: no longer due. */
  readonly caughtUp = new Set<string>();
  private spent = 0;
  /** Pages asked for against the budget; a page past it abandons its read. */
  private readonly lister: EntityLister;

  constructor(
    private readonly run: SyncRun,
    client: ConsoleApiClient,
    private readonly budget: number | null,
  ) {
    this.summary.budget = budget;
    this.lister = {
      listPage: (path, params, signal) => {
        if (!this.hasRoom()) return Promise.reject(new BudgetSpent());
        this.spent += 1;
        return client.listPage(path, params, signal);
      },
    };
  }

  private hasRoom(): boolean {
    return this.budget === null || this.spent < this.budget;
  }

  private context() {
    return { runId: this.run.runId, now: this.run.now() };
  }

  async readAll(due: readonly DueRead[]): Promise<void> {
    // Reads overlap; writes follow the due order, so entity_seq does not depend on response timing.
    const stored: Promise<void>[] = [];
    const settle: (() => void)[] = [];
    for (let i = 0; i < due.length; i += 1) stored.push(new Promise<void>((resolve) => settle.push(resolve)));
    const read = (indexes: number[], concurrency: number) =>
      runPool(
        indexes,
        concurrency,
        async (i, signal) => {
          try {
            const entity = due[i] as DueRead;
            const result = this.hasRoom() ? await this.fetch(entity, signal) : null;
            await stored[i - 1];
            if (result !== null && !signal.aborted) await this.store(entity, result);
          } finally {
            settle[i]?.();
          }
        },
        this.run.signal,
      );
    // The first read alone: a key without the entity scope then costs one 403, not one per read in flight.
    const indexes = due.map((_, i) => i);
    await read(indexes.slice(0, 1), 1);
    await read(indexes.slice(1), this.run.options.concurrency);
  }

  /** One read: its answer, or null when the budget ran out before it ended; a failure stops the pass. */
  private async fetch(entity: DueRead, signal: AbortSignal): Promise<Fetched | null> {
    const { kind, key } = entity;
    try {
      return await readOf(this.lister, entity, signal);
    } catch (error) {
      if (error instanceof BudgetSpent) return null;
      if (signal.aborted || error instanceof AbortedError || !(error instanceof ApiError)) throw error;
      warn(
        this.run,
        `Entity history stopped at ${kind.replace("_", " ")} of ${key}: ${error.message} The next sync tries again.`,
      );
      throw new StopEntities();
    }
  }

  /** A read's outcome recorded and its items stored; a 403 stops the pass. */
  private async store(entity: DueRead, fetched: Fetched): Promise<void> {
    const { kind, key } = entity;
    const { result } = fetched;
    const { store } = this.run;
    const items = result.status === "ok" ? result.items.length : 0;
    const invalid = result.status === "ok" ? result.invalid.length : 0;
    this.count(kind);
    await recordEntityFetch(store, { kind, key, outcome: result.status, items, invalid }, this.context());
    // Never dropped: an item that fails its schema is kept whole in quarantine with its issues.
    if (result.status === "ok" && invalid > 0) {
      await quarantineEntityItems(store, result.invalid, result.requestPath, this.context());
    }
    if (result.status === "forbidden") {
      this.summary.forbidden = true;
      warn(
        this.run,
        `The API key may not read entity history (HTTP 403 on ${result.requestPath}): config versions, experiments and metrics were not read; the audit log was.`,
      );
      throw new StopEntities();
    }
    this.caughtUp.add(dueKey(entity));
    if (result.status === "not_found") {
      this.summary.notFound.push(`${kind}:${key}`);
      return;
    }
    this.summary.invalid += invalid;
    if (fetched.kind === "config_versions" && fetched.result.status === "ok")
      await this.storeVersions(key, fetched.result.items);
    else if (fetched.kind === "layer_experiments" && fetched.result.status === "ok")
      await this.storeExperiments(key, fetched.result.items);
    else if (fetched.kind === "event_metrics" && fetched.result.status === "ok")
      await this.storeMetrics(key, fetched.result.items);
  }

  private count(kind: EntityKind): void {
    if (kind === "config_versions") this.summary.configs += 1;
    else if (kind === "layer_experiments") this.summary.layers += 1;
    else this.summary.events += 1;
  }

  private async storeVersions(key: string, items: Ok<Extract<Fetched, { kind: "config_versions" }>>) {
    const { store } = this.run;
    const versions = items.map(({ record, raw }) => ({
      configId: record.id,
      version: record.version,
      lastModifiedTime: record.lastModifiedTime,
      lastModifierId: record.lastModifierID ?? null,
      lastModifierName: record.lastModifierName ?? null,
      raw,
    }));
    const stored = await storeConfigVersions(store, key, versions, this.context());
    this.summary.newVersions += stored.inserted;
    this.summary.mutatedVersions.push(...stored.mutations);
    await linkAndDiffConfig(store, key);
  }

  private async storeExperiments(layer: string, items: Ok<Extract<Fetched, { kind: "layer_experiments" }>>) {
    const snapshots = items.map(({ record, raw }) => ({
      id: record.id,
      name: record.name,
      status: record.status,
      raw,
    }));
    this.summary.experimentSnapshots += await storeExperimentSnapshots(
      this.run.store,
      layer,
      snapshots,
      this.context(),
    );
  }

  private async storeMetrics(event: string, items: Ok<Extract<Fetched, { kind: "event_metrics" }>>) {
    const snapshots = items.map(({ record, raw }) => ({ id: record.id, raw }));
    this.summary.metricSnapshots += await storeMetricSnapshots(
      this.run.store,
      event,
      snapshots,
      this.context(),
    );
  }
}

/** A warning of the run: counted, shown in the summary, emitted (the entity part adds at most two). */
function warn(run: SyncRun, message: string): void {
  run.counters.warnings += 1;
  run.warningMessages.push(message);
  run.emit({ type: "warning", message });
}
