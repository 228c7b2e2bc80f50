// Entity routes of the simulator (experiments, layers, dynamic configs, metrics, events) and the
// observer through which the history generator keeps them consistent with the audit log.
import type { ServiceEvent } from "../events/serviceEvent.ts";
import type { AuditAppender, HistoryObserver, SimActor, SimRoute } from "../types.ts";
import { DynamicConfigStore } from "./dynamicConfigs.ts";
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
}

export function createEntityWorld(options: EntityWorldOptions): EntityWorld {
  const consoleActor = options.consoleActor ?? {
    id: seededId(options.seed, "actor", "console-api"),
    name: "CONSOLE API",
    email: "",
  };
  const experiments = new ExperimentStore({ ...options, consoleActor });
  const configs = new DynamicConfigStore();
  const events = new EventStore(options.now);
  return {
    routes: [...experiments.routes(), ...configs.routes(), ...events.routes()],
    observer: { configChanged: configs.observe, experimentChanged: experiments.observe },
    ingestEvent: (event) => events.ingest(event),
    getExperiment: (id) => experiments.get(id),
    dynamicConfigIds: () => configs.ids(),
    configVersionCount: (configId) => configs.versionCount(configId),
    eventCount: (eventName) => events.count(eventName),
  };
}
