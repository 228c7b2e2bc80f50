// The store's key-value metadata, and whether it holds any record, on either engine: what opening a
// store and its projects reads (every command), apart from src/store/syncStore.ts, whose write path
// (rule diffs, time parsing) a read command need not load.
import { newestRecordTimeTexts as newestRecordTimeTextsNow } from "./coverageState.ts";
import {
  readMetaValue as readMetaValueNow,
  readMetaValuesWithPrefix as readMetaValuesWithPrefixNow,
  writeMetaValue as writeMetaValueNow,
} from "./metaValues.ts";
import { byEngine } from "./openAny.ts";

export const readMetaValue = byEngine(readMetaValueNow, (pg) => pg.readPgMetaValue);
export const writeMetaValue = byEngine(writeMetaValueNow, (pg) => pg.writePgMetaValue);
export const readMetaValuesWithPrefix = byEngine(
  readMetaValuesWithPrefixNow,
  (pg) => pg.readPgMetaValuesWithPrefix,
);
/** The newest record's date and time texts (one with a parseable time); undefined for a store without records. */
export const newestRecordTimeTexts = byEngine(newestRecordTimeTextsNow, (pg) => pg.newestPgRecordTimeTexts);
