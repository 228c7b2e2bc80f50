// A read's outcome into the store and the pass's summary: an ok read's items stored by kind (config
// versions linked and diffed) in one transaction with its fetch row and its invalid items (quarantined,
// never dropped); a 404 or 403 recorded alone, a 403 stopping the pass.
import type { EntityKind } from "../api/entities.ts";
import { recordEntityFetch, type WriteContext } from "../store/syncStore.ts";
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

  private context(): WriteContext {
    // The pass's first write (syncEntities' check of the chain's end) took the previous key, if any.
    const signing = { key: this.run.options.signingKey, warn: (message: string) => warn(this.run, message) };
    return { runId: this.run.runId, now: this.run.now(), signing };
  }

  /** A read's outcome recorded and its items stored (an ok or a 404 returns: the entity caught up); a 403 stops the pass. */
  async store(entity: DueRead, fetched: Fetched): Promise<void> {
    const { kind, key } = entity;
    const { result } = fetched;
    this.count(kind);
    if (result.status !== "ok") {
      const fetch = { kind, key, outcome: result.status, items: 0, invalid: 0 };
      await recordEntityFetch(this.run.store, fetch, this.context());
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
    this.summary.invalid += result.invalid.length;
    // The read's fetch row and invalid items are written in the transaction of its items: a write that
    // fails leaves the entity due for the next run.
    const read = {
      kind,
      key,
      outcome: "ok" as const,
      items: result.items.length,
      invalid: result.invalid.length,
      invalidItems: result.invalid,
      requestPath: result.requestPath,
    };
    const context = { ...this.context(), read };
    if (fetched.kind === "config_versions" && fetched.result.status === "ok")
      await this.storeVersions(key, fetched.result.items, context);
    else if (fetched.kind === "layer_experiments" && fetched.result.status === "ok")
      await this.storeExperiments(key, fetched.result.items, context);
    else if (fetched.kind === "event_metrics" && fetched.result.status === "ok")
      await this.storeMetrics(key, fetched.result.items, context);
  }

  private count(kind: EntityKind): void {
    if (kind === "config_versions") this.summary.configs += 1;
    else if (kind === "layer_experiments") this.summary.layers += 1;
    else this.summary.events += 1;
  }

  private async storeVersions(key: string, items: OkItems<"config_versions">, context: WriteContext) {
    const { store } = this.run;
    const versions = items.map(({ record, raw }) => ({
      configId: record.id,
      version: record.version,
      lastModifiedTime: record.lastModifiedTime,
      lastModifierId: record.lastModifierID ?? null,
      lastModifierName: record.lastModifierName ?? null,
      raw,
    }));
    // Linked and diffed in the same transaction.
    const stored = await storeConfigVersions(store, key, versions, context);
    this.summary.newVersions += stored.inserted;
    this.summary.mutatedVersions.push(...stored.mutations);
  }

  private async storeExperiments(layer: string, items: OkItems<"layer_experiments">, context: WriteContext) {
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
      context,
    );
  }

  private async storeMetrics(event: string, items: OkItems<"event_metrics">, context: WriteContext) {
    const snapshots = items.map(({ record, raw }) => ({ id: record.id, raw }));
    this.summary.metricSnapshots += await storeMetricSnapshots(this.run.store, event, snapshots, context);
  }
}
