// The store as the sync side sees it (src/sync, src/daemon, src/demo and the sync, daemon and demo
// commands): every function that reaches the database returns a Promise, so that a PostgreSQL
// implementation (an async driver) can sit behind the same signatures. SQLite stays synchronous
// underneath: each function here runs its better-sqlite3 work at once and resolves with the result,
// and the synchronous helpers stay inside src/store/, where transactions call them without awaiting.
// Signatures are the SQLite functions' own (parameters and results), only made async, so they are not
// written twice.
import { beginBulkLoad, finishBulkLoad } from "./bulkLoad.ts";
import { readCheckpoint as readCheckpointNow } from "./checkpoints.ts";
import type { Store } from "./connection.ts";
import {
  checkedRunStart,
  knownShortfalls,
  localCountForRange,
  localCountsByDay,
  recordCoverage,
} from "./coverageCounts.ts";
import {
  addPendingCoverageDays as addPendingCoverageDaysNow,
  newestRecordTimeTexts as newestRecordTimeTextsNow,
  openCoverageDays as openCoverageDaysNow,
  readCoverage as readCoverageNow,
  readPendingCoverageDays as readPendingCoverageDaysNow,
} from "./coverageState.ts";
import { linkAndDiffConfig as linkAndDiffConfigNow } from "./entityLinks.ts";
import {
  configsDueForVersions as configsDueForVersionsNow,
  eventsDueForMetrics as eventsDueForMetricsNow,
  layersDueForExperiments as layersDueForExperimentsNow,
} from "./entityQueries.ts";
import {
  quarantineEntityItems as quarantineEntityItemsNow,
  recordEntityFetch as recordEntityFetchNow,
  storeConfigVersions as storeConfigVersionsNow,
  storeExperimentSnapshots as storeExperimentSnapshotsNow,
  storeMetricSnapshots as storeMetricSnapshotsNow,
} from "./entityWrites.ts";
import {
  acquireLease as acquireLeaseNow,
  releaseLease as releaseLeaseNow,
  renewLease as renewLeaseNow,
} from "./leases.ts";
import { readMetaValue, writeMetaValue } from "./metaValues.ts";
import { openStore as openStoreNow } from "./open.ts";
import { backfillRuleDiffs as backfillRuleDiffsNow } from "./ruleDiffs.ts";
import { commitSyncBatch } from "./syncBatch.ts";
import {
  createPlan as createPlanNow,
  dropPlanIfUntouched,
  finishPlan,
  oldestServerDay as oldestServerDayNow,
  readGrantedPageSize,
  readPlan as readPlanNow,
  readWindows as readWindowsNow,
  saveGrantedPageSize,
} from "./syncPlans.ts";
import {
  finishRun as finishRunNow,
  markOrphanRunsInterrupted as markOrphanRunsInterruptedNow,
  startRun as startRunNow,
} from "./syncRuns.ts";

/** A synchronous store function as the boundary's async one (a throw becomes a rejection). */
const later =
  <A extends unknown[], R>(now: (...args: A) => R) =>
  async (...args: A): Promise<R> =>
    now(...args);

// Names and pure helpers the sync side shares with the store (no database access).
export { EXPERIMENT_STATE_CHANGES } from "./categories.ts";
export type { Store } from "./connection.ts";
export type { CoverageDay } from "./coverageCounts.ts";
export type { MutatedVersion } from "./entityWrites.ts";
export { DAEMON_LAST_CYCLE_KEY, DAEMON_LEASE, leaseHolder } from "./leases.ts";
export type { OpenOptions } from "./open.ts";
export type { BatchPage } from "./syncBatch.ts";
export type { SyncPlan, SyncWindow } from "./syncPlans.ts";
export type { RunCounters } from "./syncRuns.ts";
export { emptyCounts, prepareRecords } from "./writes.ts";

/** Opens (creating and migrating) the store the sync writes. */
export const openStore: (...args: Parameters<typeof openStoreNow>) => Promise<Store> = later(openStoreNow);

// Leases and runs.
export const acquireLease = later(acquireLeaseNow);
export const renewLease = later(renewLeaseNow);
export const releaseLease = later(releaseLeaseNow);
export const startRun = later(startRunNow);
export const finishRun = later(finishRunNow);
export const markOrphanRunsInterrupted = later(markOrphanRunsInterruptedNow);

// Plans, checkpoints and the batch writer (already async).
export const readCheckpoint = later(readCheckpointNow);
export const readPlan = later(readPlanNow);
export const createPlan = later(createPlanNow);
export const readWindows = later(readWindowsNow);
export const oldestServerDay = later(oldestServerDayNow);
export { commitSyncBatch, dropPlanIfUntouched, finishPlan, readGrantedPageSize, saveGrantedPageSize };
export { beginBulkLoad, finishBulkLoad };
export const backfillRuleDiffs = later(backfillRuleDiffsNow);

// Coverage.
export const readCoverage = later(readCoverageNow);
export const openCoverageDays = later(openCoverageDaysNow);
export const newestRecordTimeTexts = later(newestRecordTimeTextsNow);
export const readPendingCoverageDays = later(readPendingCoverageDaysNow);
export const addPendingCoverageDays = later(addPendingCoverageDaysNow);
export { checkedRunStart, knownShortfalls, localCountForRange, localCountsByDay, recordCoverage };

// Entity history.
export const configsDueForVersions = later(configsDueForVersionsNow);
export const layersDueForExperiments = later(layersDueForExperimentsNow);
export const eventsDueForMetrics = later(eventsDueForMetricsNow);
export const storeConfigVersions = later(storeConfigVersionsNow);
export const storeExperimentSnapshots = later(storeExperimentSnapshotsNow);
export const storeMetricSnapshots = later(storeMetricSnapshotsNow);
export const recordEntityFetch = later(recordEntityFetchNow);
export const quarantineEntityItems = later(quarantineEntityItemsNow);
export const linkAndDiffConfig = later(linkAndDiffConfigNow);

// Metadata (the demo's world, the daemon's last cycle).
export { readMetaValue, writeMetaValue };
