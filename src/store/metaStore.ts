// What opening a store and its projects reads (every command), apart from syncStore.ts's write path.
export { maxSeq, newestRecordTimeTexts } from "./coverageState.ts";

export { readMetaValue, readMetaValuesWithPrefix, writeMetaValue } from "./metaValues.ts";
