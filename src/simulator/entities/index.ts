// Entity routes of the simulator (experiments, layers, dynamic configs, metrics, events).
// Placeholder until the entity side lands: no routes, and the generator's reports are ignored.
import type { AuditAppender, HistoryObserver, SimRoute } from "../types.ts";

export interface EntityWorldOptions {
  appender: AuditAppender;
  /** Epoch ms "now" of the simulator's clock. */
  now: () => number;
  seed: number;
  /** Shared secret expected by the event webhook. */
  serverSecret: string;
}

export interface EntityWorld {
  routes: SimRoute[];
  observer: HistoryObserver;
}

export function createEntityWorld(_options: EntityWorldOptions): EntityWorld {
  return {
    routes: [],
    observer: { configChanged() {}, experimentChanged() {} },
  };
}
