// The store's key-value metadata, and whether it holds any record, on either engine: what opening a
// store and its projects reads (every command), apart from src/store/syncStore.ts, whose write path
// (rule diffs, time parsing) a read command need not load.
export { newestRecordTimeTexts } from "./coverageState.ts";

export { readMetaValue, readMetaValuesWithPrefix, writeMetaValue } from "./metaValues.ts";
