// Everything the engine-neutral store modules (src/store/*.ts, src/sql) call on PostgreSQL, in one
// module that they load on first use (src/store/openAny.ts, pgSide()): the PostgreSQL half is ~70
// modules (pg, drizzle's node-postgres driver, this folder) that a SQLite store never needs.
export { holdsLeaseLock, leaseLockHeld, leaseLockLive, lockLease, unlockLease } from "./leaseLocks.ts";
export { openPgStore } from "./open.ts";
export { inPgQueriesReadSnapshot, inPgQueriesTransaction, pgQueries } from "./queries.ts";
export { queryPgReadOnly } from "./readOnlyQuery.ts";
export { readPgReportSnapshot } from "./reportSnapshot.ts";
export { openPgBatchWriter } from "./writes.ts";
