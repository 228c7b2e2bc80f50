// What the entity part of a sync did, as its summary reports it, and its warnings (shared by the pass's
// reads and stores).
import type { MutatedVersion } from "../store/syncStore.ts";
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

export const emptySummary = (budget: number | null): EntitySummary => ({
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
  budget,
  pending: 0,
});

/** Stops the entity reads: a 403, or a failure after all retries. */
export class StopEntities extends Error {}

/** A warning of the run: counted, shown in the summary, emitted (the entity part adds at most two). */
export function warn(run: SyncRun, message: string): void {
  run.counters.warnings += 1;
  run.warningMessages.push(message);
  run.emit({ type: "warning", message });
}
