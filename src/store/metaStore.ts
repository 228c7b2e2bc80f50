// The store's key-value metadata, and whether it holds any record, on either engine: what opening a
// store and its projects reads (every command), apart from src/store/syncStore.ts, whose write path
// (rule diffs, time parsing) a read command need not load.
import { newestRecordTimeTexts as newestRecordTimeTextsNow } from "./coverageState.ts";
import { byEngine } from "./openAny.ts";

export { readMetaValue, readMetaValuesWithPrefix, writeMetaValue } from "./metaValues.ts";
/** The newest record's date and time texts (one with a parseable time); undefined for a store without records. */
export const newestRecordTimeTexts = byEngine(newestRecordTimeTextsNow, (pg) => pg.newestPgRecordTimeTexts);
