// A read's outcome into the store and the pass's summary: the fetch recorded, invalid items kept in
// quarantine, the items stored by kind (config versions then linked and diffed), a 403 stopping the pass.
import type { EntityKind } from "../api/entities.ts";
import { linkAndDiffConfig, quarantineEntityItems, recordEntityFetch } from "../store/syncStore.ts";
import { storeConfigVersions, storeExperimentSnapshots, storeMetricSnapshots } from "./entityChanges.ts";
import type { DueRead } from "./entityDue.ts";
import type { Fetched, OkItems } from "./entityReads.ts";
import { type EntitySummary, StopEntities, warn } from "./entitySummary.ts";
import type { SyncRun } from "./run.ts";

export class EntityWriter {
  constructor(
    private readonly run: SyncRun,
    private readonly summary: EntitySummary,
  ) {}

  private context() {
    return { runId: this.run.runId, now: this.run.now() };
  }

  /** A read's outcome recorded and its items stored (an ok or a 404 returns: the entity caught up); a 403 stops the pass. */
  async store(entity: DueRead, fetched: Fetched): Promise<void> {
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

  private async storeVersions(key: string, items: OkItems<"config_versions">) {
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

  private async storeExperiments(layer: string, items: OkItems<"layer_experiments">) {
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

  private async storeMetrics(event: string, items: OkItems<"event_metrics">) {
    const snapshots = items.map(({ record, raw }) => ({ id: record.id, raw }));
    this.summary.metricSnapshots += await storeMetricSnapshots(
      this.run.store,
      event,
      snapshots,
      this.context(),
    );
  }
}
