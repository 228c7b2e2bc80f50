// The store as the sync side sees it (src/sync, src/daemon, src/demo and the sync, daemon and demo
// commands): every function that reaches the database returns a Promise, so that a PostgreSQL
// implementation (an async driver) can sit behind the same signatures. SQLite stays synchronous
// underneath: each function here runs its better-sqlite3 work at once and resolves with the result,
// and the synchronous helpers stay inside src/store/, where transactions call them without awaiting.
// Signatures are the SQLite functions' own (parameters and results), only made async, so they are not
// written twice. Each function takes a store of either engine and dispatches on its `engine`: the
// PostgreSQL side lives in src/store/pg/ under the same name with a `Pg` infix.

import { FlagtrailError } from "../errors.ts";
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
import { readMetaValue as readMetaValueNow, writeMetaValue as writeMetaValueNow } from "./metaValues.ts";
import { type OpenOptions, openStore as openSqliteStore } from "./open.ts";
import type { AnyStore } from "./openAny.ts";
import type { PgStore } from "./pg/connection.ts";
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
import { openPgStore } from "./pg/open.ts";
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

/** A PostgreSQL side not written yet: says so in one sentence instead of writing half a sync. */
const pgPending =
  (what: string) =>
  async (store: PgStore): Promise<never> => {
    throw new FlagtrailError(`${what} on a PostgreSQL store (${store.location}) is not supported yet.`);
  };

// Names and pure helpers the sync side shares with the store (no database access).
export { EXPERIMENT_STATE_CHANGES } from "./categories.ts";
export type { CoverageDay } from "./coverageCounts.ts";
export type { MutatedVersion } from "./entityWrites.ts";
export { DAEMON_LAST_CYCLE_KEY, DAEMON_LEASE, leaseHolder } from "./leases.ts";
export type { OpenOptions } from "./open.ts";
export type { BatchPage } from "./syncBatch.ts";
export type { SyncPlan, SyncWindow } from "./syncPlans.ts";
export type { RunCounters } from "./syncRuns.ts";
export { emptyCounts, prepareRecords } from "./writes.ts";

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
export const startRun = either(startRunNow, pgPending("Starting a sync run"));
export const finishRun = either(finishRunNow, pgPending("Finishing a sync run"));
export const markOrphanRunsInterrupted = either(
  markOrphanRunsInterruptedNow,
  pgPending("Marking interrupted runs"),
);

// Plans, checkpoints and the batch writer.
export const readCheckpoint = either(readCheckpointNow, pgPending("Reading the checkpoint"));
export const readPlan = either(readPlanNow, pgPending("Reading the sync plan"));
export const createPlan = either(createPlanNow, pgPending("Creating a sync plan"));
export const readWindows = either(readWindowsNow, pgPending("Reading sync windows"));
export const oldestServerDay = either(oldestServerDayNow, pgPending("Reading the oldest server day"));
export const commitSyncBatch = either(commitSyncBatchNow, pgPending("Writing records"));
export const dropPlanIfUntouched = either(dropPlanIfUntouchedNow, pgPending("Dropping a sync plan"));
export const finishPlan = either(finishPlanNow, pgPending("Finishing a sync plan"));
export const readGrantedPageSize = either(readGrantedPageSizeNow, pgPending("Reading the granted page size"));
export const saveGrantedPageSize = either(saveGrantedPageSizeNow, pgPending("Saving the granted page size"));
export const beginBulkLoad = either(beginBulkLoadNow, pgPending("Starting a bulk load"));
export const finishBulkLoad = either(finishBulkLoadNow, pgPending("Finishing a bulk load"));
export const backfillRuleDiffs = either(backfillRuleDiffsNow, pgPending("Backfilling rule diffs"));

// Coverage.
export const readCoverage = either(readCoverageNow, pgPending("Reading coverage"));
export const openCoverageDays = either(openCoverageDaysNow, pgPending("Reading open coverage days"));
export const newestRecordTimeTexts = either(newestRecordTimeTextsNow, pgPending("Reading the newest record"));
export const readPendingCoverageDays = either(
  readPendingCoverageDaysNow,
  pgPending("Reading pending coverage days"),
);
export const addPendingCoverageDays = either(
  addPendingCoverageDaysNow,
  pgPending("Adding pending coverage days"),
);
export const checkedRunStart = either(checkedRunStartNow, pgPending("Reading checked coverage"));
export const knownShortfalls = either(knownShortfallsNow, pgPending("Reading coverage shortfalls"));
export const localCountForRange = either(localCountForRangeNow, pgPending("Counting local records"));
export const localCountsByDay = either(localCountsByDayNow, pgPending("Counting local records by day"));
export const recordCoverage = either(recordCoverageNow, pgPending("Recording coverage"));

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
export const readMetaValue = either(readMetaValueNow, pgPending("Reading metadata"));
export const writeMetaValue = either(writeMetaValueNow, pgPending("Writing metadata"));
