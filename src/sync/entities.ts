// The entity part of a sync, run once after the audit log part: the version history of every dynamic
// config with a config edit stored since its versions were last read (a run without one makes no
// version request), the experiments of the layers the audit log names, and the metrics of the events
// read before or named by the caller. Same client, so the same rate budget and retry rules. A 404 is
// recorded and the run goes on; the first 403 is reported once and ends the entity reads (the audit
// records are already committed, so the run still succeeds).

import { EXPERIMENT_STATE_CHANGES } from "../api/actionCategories.ts";
import type { ConsoleClient } from "../api/client.ts";
import type { ConsoleApiClient } from "../api/consoleClient.ts";
import {
  type EntityKind,
  type EntityRead,
  listConfigVersions,
  listEventMetrics,
  listLayerExperiments,
} from "../api/entities.ts";
import { LAYER_ACTIONS } from "../api/entityActions.ts";
import { AbortedError, ApiError } from "../errors.ts";
import {
  configsDueForVersions,
  eventsDueForMetrics,
  layersDueForExperiments,
  linkAndDiffConfig,
  type MutatedVersion,
  quarantineEntityItems,
  recordEntityFetch,
  storeConfigVersions,
  storeExperimentSnapshots,
  storeMetricSnapshots,
} from "../store/syncStore.ts";
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
}

const hasListPage = (client: ConsoleClient): client is ConsoleApiClient =>
  typeof (client as Partial<ConsoleApiClient>).listPage === "function";

/** Stops the entity reads: a 403, or a failure after all retries. */
class StopEntities extends Error {}

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
});

export async function syncEntities(run: SyncRun): Promise<EntitySummary | null> {
  const { client, options } = run;
  if (!options.entities || !hasListPage(client) || run.signal.aborted) return null;
  const pass = new EntityPass(run, client);
  const requestsBefore = client.stats().requests;
  try {
    await pass.configs();
    run.emit({ type: "entities", pass: "configs", read: pass.summary.configs });
    await pass.layers();
    run.emit({ type: "entities", pass: "layers", read: pass.summary.layers });
    await pass.events();
    run.emit({ type: "entities", pass: "events", read: pass.summary.events });
  } catch (error) {
    if (!(error instanceof StopEntities)) throw error;
  }
  const summary = pass.summary;
  summary.requests = client.stats().requests - requestsBefore;
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

/** One entity pass of a run: the reads of each kind, each stored as it arrives. */
class EntityPass {
  readonly summary = emptySummary();

  constructor(
    private readonly run: SyncRun,
    private readonly client: ConsoleApiClient,
  ) {}

  private context() {
    return { runId: this.run.runId, now: this.run.now() };
  }

  async configs(): Promise<void> {
    const { store, signal } = this.run;
    for (const key of await configsDueForVersions(store)) {
      if (signal.aborted) return;
      this.summary.configs += 1;
      const result = await this.read("config_versions", key, () =>
        listConfigVersions(this.client, key, { signal }),
      );
      if (result === null) continue;
      const versions = result.items.map(({ record, raw }) => ({
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
  }

  async layers(): Promise<void> {
    const { store, signal } = this.run;
    for (const layer of await layersDueForExperiments(store, LAYER_ACTIONS, EXPERIMENT_STATE_CHANGES)) {
      if (signal.aborted) return;
      this.summary.layers += 1;
      const result = await this.read("layer_experiments", layer, () =>
        listLayerExperiments(this.client, layer, { signal }),
      );
      if (result === null) continue;
      const items = result.items.map(({ record, raw }) => ({
        id: record.id,
        name: record.name,
        status: record.status,
        raw,
      }));
      this.summary.experimentSnapshots += await storeExperimentSnapshots(store, layer, items, this.context());
    }
  }

  async events(): Promise<void> {
    const { store, signal, options } = this.run;
    for (const event of await eventsDueForMetrics(store, options.events)) {
      if (signal.aborted) return;
      this.summary.events += 1;
      const result = await this.read("event_metrics", event, () =>
        listEventMetrics(this.client, event, { signal }),
      );
      if (result === null) continue;
      const items = result.items.map(({ record, raw }) => ({ id: record.id, raw }));
      this.summary.metricSnapshots += await storeMetricSnapshots(store, event, items, this.context());
    }
  }

  /** One read, its outcome recorded: the items when ok, null for a 404; a 403 or a failure stops the pass. */
  private async read<T>(
    kind: EntityKind,
    key: string,
    get: () => Promise<EntityRead<T>>,
  ): Promise<Extract<EntityRead<T>, { status: "ok" }> | null> {
    let result: EntityRead<T>;
    try {
      result = await get();
    } catch (error) {
      if (this.run.signal.aborted || error instanceof AbortedError || !(error instanceof ApiError))
        throw error;
      warn(
        this.run,
        `Entity history stopped at ${kind.replace("_", " ")} of ${key}: ${error.message} The next sync tries again.`,
      );
      throw new StopEntities();
    }
    const items = result.status === "ok" ? result.items.length : 0;
    const invalid = result.status === "ok" ? result.invalid.length : 0;
    await recordEntityFetch(
      this.run.store,
      { kind, key, outcome: result.status, items, invalid },
      this.context(),
    );
    // Never dropped: an item that fails its schema is kept whole in quarantine with its issues.
    if (result.status === "ok" && invalid > 0) {
      await quarantineEntityItems(this.run.store, result.invalid, result.requestPath, this.context());
    }
    if (result.status === "forbidden") {
      this.summary.forbidden = true;
      warn(
        this.run,
        `The API key may not read entity history (HTTP 403 on ${result.requestPath}): config versions, experiments and metrics were not read; the audit log was.`,
      );
      throw new StopEntities();
    }
    if (result.status === "not_found") {
      this.summary.notFound.push(`${kind}:${key}`);
      return null;
    }
    this.summary.invalid += invalid;
    return result;
  }
}

/** A warning of the run: counted, shown in the summary, emitted (the entity part adds at most two). */
function warn(run: SyncRun, message: string): void {
  run.counters.warnings += 1;
  run.warningMessages.push(message);
  run.emit({ type: "warning", message });
}
