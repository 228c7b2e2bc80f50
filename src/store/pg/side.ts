// Everything the engine-neutral store modules call on PostgreSQL, loaded on first use (pgSide(), openAny.ts).
export { holdsLeaseLock, leaseLockHeld, leaseLockLive, lockLease, unlockLease } from "./leaseLocks.ts";
export { openPgStore } from "./open.ts";
export { inPgQueriesReadSnapshot, inPgQueriesTransaction, pgQueries } from "./queries.ts";
export { queryPgReadOnly } from "./readOnlyQuery.ts";
export { readPgReportSnapshot } from "./reportSnapshot.ts";
export { openPgBatchWriter } from "./writes.ts";
