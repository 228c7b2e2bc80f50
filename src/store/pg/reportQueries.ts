// The report's reads on PostgreSQL: src/store/reportQueries.ts's queries in this dialect, same names,
// parameters (`@name`, bound from the same JSON values, so the Markdown prints the same `--param`s) and
// rows in the same order. What differs, and why:
//   - JSON lists: json_array_elements(_text)(@x::json) and ->> for SQLite's json_each / json_extract;
//   - text sorts COLLATE "C" (SQLite's byte order; the server's default collation may be ICU's), and so
//     does max() over text;
//   - NULLs sort first ascending as on SQLite (NULLS FIRST where a sorted column can be NULL);
//   - a grouped column appears in GROUP BY (PostgreSQL has no bare columns), a subquery has an alias,
//     ORDER BY uses no output alias inside an expression.
// The texts only, free of the driver: the report prints them whichever engine the store is on. They are
// run by ./reportSnapshot.ts.
import { bindParams, paramsFor, type ReportParams, type ReportQueryName } from "../reportQueries.ts";
import { PG_ENTITY_REPORT_QUERIES } from "./entityReportQueries.ts";
import { PG_COMPLETENESS_QUERIES } from "./reportQueries/completeness.ts";
import { PG_ENTITY_SECTION_QUERIES } from "./reportQueries/entities.ts";
import { PG_MUTATION_QUERIES } from "./reportQueries/mutations.ts";
import { PG_OVERVIEW_QUERIES } from "./reportQueries/overview.ts";
import { PG_REVIEW_QUERIES } from "./reportQueries/reviews.ts";

/** The queries of src/store/reportQueries.ts (see the notes there), in PostgreSQL's dialect. */
export const PG_QUERIES: Record<ReportQueryName, string> = {
  ...PG_ENTITY_REPORT_QUERIES,
  ...PG_ENTITY_SECTION_QUERIES,
  ...PG_OVERVIEW_QUERIES,
  ...PG_COMPLETENESS_QUERIES,
  ...PG_REVIEW_QUERIES,
  ...PG_MUTATION_QUERIES,
};

/** A query's PostgreSQL text and the values it binds, as the report prints them for `flagtrail sql`. */
export function pgReportQuery(
  name: ReportQueryName,
  params: ReportParams,
): { sql: string; params: Record<string, unknown> } {
  const sql = PG_QUERIES[name];
  return { sql, params: paramsFor(sql, bindParams(params)) };
}
