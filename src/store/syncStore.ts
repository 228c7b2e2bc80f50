// The store as the sync side sees it (src/sync, src/daemon, src/demo and their commands): every function
// returns a Promise and takes a store of either engine (one query text each, src/store/query.ts); only the
// batch's record writer differs per engine (syncBatch.ts).

import type { OpenOptions } from "./open.ts";
import { type AnyStore, openAnyStore } from "./openAny.ts";

export { leaseHolder } from "../holders.ts";
export type {
  ChangedSnapshots,
  MutatedVersion,
  PlanVersions,
  SnapshotInput,
  VersionInput,
  VersionWrite,
} from "../records/entityRows.ts";
export { emptyCounts } from "../records/pageTally.ts";
export type { Checkpoint } from "./checkpoints.ts";
export type { CoverageDay } from "./coverageState.ts";
export type { WriteContext } from "./entityWrites.ts";
export { DAEMON_LAST_CYCLE_KEY, DAEMON_LEASE } from "./leases.ts";
export type { OpenOptions } from "./open.ts";
export type { BatchPage } from "./syncBatch.ts";
export type { CheckpointRule, StoredHead, SyncPlan, SyncWindow } from "./syncPlans.ts";
export { type RunCounters, runCounterColumns } from "./syncRuns.ts";

/** A store the sync writes: a SQLite file or a PostgreSQL database. */
export type Store = AnyStore;

/**
 * A handle to renew a long-held lease through while `store` is busy (the daemon's heartbeat): on SQLite a
 * connection of its own (the store's may be in a long read); PostgreSQL holds each lease on a session of
 * its own already, and an in-memory SQLite has one connection: `store` itself.
 */
export function openLeaseStore(store: Store): Promise<Store> {
  const own = store.engine === "postgres" || store.path === ":memory:";
  return own ? Promise.resolve(store) : openAnyStore(store.path);
}

/** Opens (creating and migrating) the store at a `--db` / FLAGTRAIL_DB value: a file path or a postgres:// URL. */
export const openStore: (value: string, options?: OpenOptions) => Promise<Store> = openAnyStore;

export { beginBulkLoad, finishBulkLoad } from "./bulkLoad.ts";
export { readStoredCheckpoint as readCheckpoint } from "./checkpoints.ts";
export {
  checkedDaysBefore,
  heldRowsByDay,
  heldRowsInRange,
  knownShortfalls,
  type Relisted,
  recordCoverage,
} from "./coverageCounts.ts";
export {
  addPendingCoverageDays,
  openCoverageDays,
  readCoverage,
  readPendingCoverageDays,
} from "./coverageState.ts";
export { saveEntityBacklog } from "./entityBacklog.ts";
export { checkEntityChainEnd } from "./entityChain.ts";
export { linkAndDiffConfig, rediffConfigsBehind } from "./entityLinks.ts";
export {
  configsDueForVersions,
  layersDueForExperiments,
  metricEventSources,
  storedVersionKeys,
} from "./entityQueries.ts";
export {
  recordEntityFetch,
  writeConfigVersions,
  writeExperimentSnapshots,
  writeMetricSnapshots,
} from "./entityWrites.ts";
export { acquireLease, releaseLease, renewLease } from "./leases.ts";
export {
  newestRecordTimeTexts,
  readMetaValue,
  writeMetaValue,
} from "./metaStore.ts";
export { backfillRuleDiffs } from "./ruleDiffs.ts";
export { commitSyncBatch } from "./syncBatch.ts";
export {
  createPlan,
  dropPlanIf,
  finishPlan,
  oldestServerDay,
  readGrantedPageSize,
  readStoredPlan as readPlan,
  readStoredWindows as readWindows,
  saveGrantedPageSize,
} from "./syncPlans.ts";
export { finishRun, markOrphanRunsInterrupted, startRun } from "./syncRuns.ts";
