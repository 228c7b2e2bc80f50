// Moved to src/sql/params.ts (one codec for `flagtrail sql --param` and the report's printed queries);
// kept so the report's imports resolve until they point there.
export { formatSqlParams } from "../sql/params.ts";
