// Entity routes of the simulator (experiments, layers, dynamic configs, metrics, events) and the
// observer through which the history generator keeps them consistent with the audit log.
import type { ServiceEvent } from "../events/serviceEvent.ts";
import { forbidden } from "../responses.ts";
import type { AuditAppender, ExperimentStatus, HistoryObserver, SimActor, SimRoute } from "../types.ts";
import { DynamicConfigStore, type VersionPatch } from "./dynamicConfigs.ts";
import { EventStore } from "./events.ts";
import { ExperimentStore } from "./experiments.ts";
import { seededId } from "./ids.ts";

export interface EntityWorldOptions {
  appender: AuditAppender;
  /** Epoch ms "now" of the simulator's clock. */
  now: () => number;
  seed: number;
  /** Shared secret expected by the event webhook. */
  serverSecret: string;
  /**
   * Who mutations made with the console key are attributed to (creator/modifier fields, audit
   * records). Default: the real service's "CONSOLE API" identity with an id derived from the seed.
   */
  consoleActor?: SimActor;
}

export interface EntityWorld {
  routes: SimRoute[];
  observer: HistoryObserver;
  /** Ingest an event as the webhook would (e.g. to seed the demo with metrics). */
  ingestEvent(event: ServiceEvent): void;
  /** The full Experiment record, as served; undefined for an unknown id. */
  getExperiment(id: string): Record<string, unknown> | undefined;
  /** Ids of the dynamic configs with stored versions, in the order they were first reported. */
  dynamicConfigIds(): string[];
  /** Stored versions of a dynamic config (0 when unknown). */
  configVersionCount(configId: string): number;
  /** Events ingested under `eventName`. */
  eventCount(eventName: string): number;
  /** Test powers over the entity routes (the audit log is not touched by any of them). */
  control: EntityControl;
}

/** What tests plant in the entity routes; every method returns false for an unknown entity. */
export interface EntityControl {
  /** Names of the dynamic configs that have versions (the audit log's `name` of their records). */
  configNames(): string[];
  /** Ids of the layers named so far (created, or joined by an experiment). */
  layerIds(): string[];
  /** Layers that list at least one experiment now. */
  populatedLayerIds(): string[];
  /** A config version with no audit record, by `actor` at `at` (default: now, the console actor). */
  plantVersion(config: string, patch: VersionPatch, actor?: SimActor, at?: number): boolean;
  /** Other content under an existing version number. */
  mutateVersion(config: string, version: number, fields: Record<string, unknown>): boolean;
  /** The config is gone: its versions route answers 404. */
  deleteConfig(config: string): boolean;
  /** An experiment's status changed with no audit record. */
  forceExperimentStatus(experiment: string, status: ExperimentStatus): boolean;
  /** true: the key lacks the scope of the entity read routes (they answer 403); the audit log still reads. */
  denyEntityReads(denied: boolean): void;
}

/** The GET routes of entities; the webhook and the experiment writes keep their own auth. */
const isEntityRead = (route: SimRoute) => route.method === "GET";

export function createEntityWorld(options: EntityWorldOptions): EntityWorld {
  const consoleActor = options.consoleActor ?? {
    id: seededId(options.seed, "actor", "console-api"),
    name: "CONSOLE API",
    email: "",
  };
  const experiments = new ExperimentStore({ ...options, consoleActor });
  const configs = new DynamicConfigStore();
  const events = new EventStore(options.now);
  let readsDenied = false;
  const routes = [...experiments.routes(), ...configs.routes(), ...events.routes()].map(
    (route): SimRoute =>
      isEntityRead(route)
        ? {
            ...route,
            handle: (request, params) => (readsDenied ? forbidden() : route.handle(request, params)),
          }
        : route,
  );
  const control: EntityControl = {
    configNames: () => configs.names(),
    layerIds: () => experiments.layerIds(),
    populatedLayerIds: () => experiments.populatedLayerIds(),
    plantVersion: (config, patch, actor = consoleActor, at = options.now()) =>
      configs.plantVersion(config, at, actor, patch),
    mutateVersion: (config, version, fields) => configs.mutateVersion(config, version, fields),
    deleteConfig: (config) => configs.deleteConfig(config),
    forceExperimentStatus: (experiment, status) => experiments.forceStatus(experiment, status, options.now()),
    denyEntityReads: (denied) => {
      readsDenied = denied;
    },
  };
  return {
    control,
    routes,
    observer: {
      configChanged: configs.observe,
      experimentChanged: experiments.observe,
      layerCreated: experiments.observeLayer,
    },
    ingestEvent: (event) => events.ingest(event),
    getExperiment: (id) => experiments.get(id),
    dynamicConfigIds: () => configs.ids(),
    configVersionCount: (configId) => configs.versionCount(configId),
    eventCount: (eventName) => events.count(eventName),
  };
}
