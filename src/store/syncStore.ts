// The store as the sync side sees it (src/sync, src/daemon, src/demo and the sync, daemon and demo
// commands): every function that reaches the database returns a Promise, so that a PostgreSQL
// implementation (an async driver) can sit behind the same signatures. SQLite stays synchronous
// underneath: each function here runs its better-sqlite3 work at once and resolves with the result,
// and the synchronous helpers stay inside src/store/, where transactions call them without awaiting.
// Signatures are the SQLite functions' own (parameters and results), only made async, so they are not
// written twice. Each function takes a store of either engine and dispatches on its `engine`: the
// PostgreSQL side lives in src/store/pg/ under the same name with a `Pg` infix.

import { beginBulkLoad as beginBulkLoadNow, finishBulkLoad as finishBulkLoadNow } from "./bulkLoad.ts";
import { readCheckpoint as readCheckpointNow } from "./checkpoints.ts";
import type { Store as SqliteStore } from "./connection.ts";
import {
  checkedRunStart as checkedRunStartNow,
  knownShortfalls as knownShortfallsNow,
  localCountForRange as localCountForRangeNow,
  localCountsByDay as localCountsByDayNow,
  recordCoverage as recordCoverageNow,
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
import { parseStoreLocation } from "./location.ts";
import {
  readMetaValue as readMetaValueNow,
  readMetaValuesWithPrefix as readMetaValuesWithPrefixNow,
  writeMetaValue as writeMetaValueNow,
} from "./metaValues.ts";
import { type OpenOptions, openStore as openSqliteStore } from "./open.ts";
import type { AnyStore } from "./openAny.ts";
import { beginPgBulkLoad, finishPgBulkLoad } from "./pg/bulkLoad.ts";
import { readPgCheckpoint } from "./pg/checkpoints.ts";
import type { PgStore } from "./pg/connection.ts";
import {
  addPgPendingCoverageDays,
  checkedPgRunStart,
  knownPgShortfalls,
  localPgCountForRange,
  localPgCountsByDay,
  newestPgRecordTimeTexts,
  openPgCoverageDays,
  readPgCoverage,
  readPgPendingCoverageDays,
  recordPgCoverage,
} from "./pg/coverage.ts";
import { linkAndDiffPgConfig } from "./pg/entityLinks.ts";
import {
  pgConfigsDueForVersions,
  pgEventsDueForMetrics,
  pgLayersDueForExperiments,
} from "./pg/entityQueries.ts";
import {
  quarantinePgEntityItems,
  recordPgEntityFetch,
  storePgConfigVersions,
  storePgExperimentSnapshots,
  storePgMetricSnapshots,
} from "./pg/entityWrites.ts";
import { acquirePgLease, releasePgLease, renewPgLease } from "./pg/leases.ts";
import { readPgMetaValue, readPgMetaValuesWithPrefix, writePgMetaValue } from "./pg/metaValues.ts";
import { openPgStore } from "./pg/open.ts";
import { backfillPgRuleDiffs } from "./pg/ruleDiffs.ts";
import { commitPgSyncBatch } from "./pg/syncBatch.ts";
import {
  createPgPlan,
  dropPgPlanIfUntouched,
  finishPgPlan,
  oldestPgServerDay,
  readPgGrantedPageSize,
  readPgPlan,
  readPgWindows,
  savePgGrantedPageSize,
} from "./pg/syncPlans.ts";
import { finishPgRun, markPgOrphanRunsInterrupted, startPgRun } from "./pg/syncRuns.ts";
import { backfillRuleDiffs as backfillRuleDiffsNow } from "./ruleDiffs.ts";
import { commitSyncBatch as commitSyncBatchNow } from "./syncBatch.ts";
import {
  createPlan as createPlanNow,
  dropPlanIfUntouched as dropPlanIfUntouchedNow,
  finishPlan as finishPlanNow,
  oldestServerDay as oldestServerDayNow,
  readGrantedPageSize as readGrantedPageSizeNow,
  readPlan as readPlanNow,
  readWindows as readWindowsNow,
  saveGrantedPageSize as saveGrantedPageSizeNow,
} from "./syncPlans.ts";
import {
  finishRun as finishRunNow,
  markOrphanRunsInterrupted as markOrphanRunsInterruptedNow,
  startRun as startRunNow,
} from "./syncRuns.ts";

/**
 * One boundary function from its two engines' implementations. The SQLite one may be synchronous
 * (better-sqlite3): a throw becomes a rejection either way.
 */
function either<A extends unknown[], R>(
  onSqlite: (store: SqliteStore, ...args: A) => R | Promise<R>,
  onPg: (store: PgStore, ...args: A) => Promise<R>,
): (store: Store, ...args: A) => Promise<R> {
  return async (store, ...args) =>
    store.engine === "postgres" ? onPg(store, ...args) : onSqlite(store, ...args);
}

// Names and pure helpers the sync side shares with the store (no database access).
export { EXPERIMENT_STATE_CHANGES } from "./categories.ts";
export type { CoverageDay } from "./coverageCounts.ts";
export type { MutatedVersion } from "./entityWrites.ts";
export { DAEMON_LAST_CYCLE_KEY, DAEMON_LEASE, leaseHolder } from "./leases.ts";
export type { OpenOptions } from "./open.ts";
export { emptyCounts, prepareRecords } from "./records.ts";
export type { BatchPage } from "./syncBatch.ts";
export type { SyncPlan, SyncWindow } from "./syncPlans.ts";
export { type RunCounters, runCounterColumns } from "./syncRuns.ts";

/** A store the sync writes: a SQLite file or a PostgreSQL database. */
export type Store = AnyStore;

/** Opens (creating and migrating) the store at a `--db` / FLAGTRAIL_DB value: a file path or a postgres:// URL. */
export async function openStore(value: string, options: OpenOptions = {}): Promise<Store> {
  const location = parseStoreLocation(value);
  return location.engine === "sqlite"
    ? openSqliteStore(location.path, options)
    : openPgStore(location.url, options);
}

// Leases and runs.
export const acquireLease = either(acquireLeaseNow, acquirePgLease);
export const renewLease = either(renewLeaseNow, renewPgLease);
export const releaseLease = either(releaseLeaseNow, releasePgLease);
export const startRun = either(startRunNow, startPgRun);
export const finishRun = either(finishRunNow, finishPgRun);
export const markOrphanRunsInterrupted = either(markOrphanRunsInterruptedNow, markPgOrphanRunsInterrupted);

// Plans, checkpoints and the batch writer.
export const readCheckpoint = either(readCheckpointNow, readPgCheckpoint);
export const readPlan = either(readPlanNow, readPgPlan);
export const createPlan = either(createPlanNow, createPgPlan);
export const readWindows = either(readWindowsNow, readPgWindows);
export const oldestServerDay = either(oldestServerDayNow, oldestPgServerDay);
export const commitSyncBatch = either(commitSyncBatchNow, commitPgSyncBatch);
export const dropPlanIfUntouched = either(dropPlanIfUntouchedNow, dropPgPlanIfUntouched);
export const finishPlan = either(finishPlanNow, finishPgPlan);
export const readGrantedPageSize = either(readGrantedPageSizeNow, readPgGrantedPageSize);
export const saveGrantedPageSize = either(saveGrantedPageSizeNow, savePgGrantedPageSize);
export const beginBulkLoad = either(beginBulkLoadNow, beginPgBulkLoad);
export const finishBulkLoad = either(finishBulkLoadNow, finishPgBulkLoad);
export const backfillRuleDiffs = either(backfillRuleDiffsNow, backfillPgRuleDiffs);

// Coverage.
export const readCoverage = either(readCoverageNow, readPgCoverage);
export const openCoverageDays = either(openCoverageDaysNow, openPgCoverageDays);
export const newestRecordTimeTexts = either(newestRecordTimeTextsNow, newestPgRecordTimeTexts);
export const readPendingCoverageDays = either(readPendingCoverageDaysNow, readPgPendingCoverageDays);
export const addPendingCoverageDays = either(addPendingCoverageDaysNow, addPgPendingCoverageDays);
export const checkedRunStart = either(checkedRunStartNow, checkedPgRunStart);
export const knownShortfalls = either(knownShortfallsNow, knownPgShortfalls);
export const localCountForRange = either(localCountForRangeNow, localPgCountForRange);
export const localCountsByDay = either(localCountsByDayNow, localPgCountsByDay);
export const recordCoverage = either(recordCoverageNow, recordPgCoverage);

// Entity history.
export const configsDueForVersions = either(configsDueForVersionsNow, pgConfigsDueForVersions);
export const layersDueForExperiments = either(layersDueForExperimentsNow, pgLayersDueForExperiments);
export const eventsDueForMetrics = either(eventsDueForMetricsNow, pgEventsDueForMetrics);
export const storeConfigVersions = either(storeConfigVersionsNow, storePgConfigVersions);
export const storeExperimentSnapshots = either(storeExperimentSnapshotsNow, storePgExperimentSnapshots);
export const storeMetricSnapshots = either(storeMetricSnapshotsNow, storePgMetricSnapshots);
export const recordEntityFetch = either(recordEntityFetchNow, recordPgEntityFetch);
export const quarantineEntityItems = either(quarantineEntityItemsNow, quarantinePgEntityItems);
export const linkAndDiffConfig = either(linkAndDiffConfigNow, linkAndDiffPgConfig);

// Metadata (the demo's world, the daemon's last cycle).
export const readMetaValue = either(readMetaValueNow, readPgMetaValue);
export const writeMetaValue = either(writeMetaValueNow, writePgMetaValue);
export const readMetaValuesWithPrefix = either(readMetaValuesWithPrefixNow, readPgMetaValuesWithPrefix);
