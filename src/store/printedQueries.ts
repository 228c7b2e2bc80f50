// The queries a report prints under each section, in both dialects: the Markdown is then the same
// bytes whichever engine the store is on, and each text re-runs with `flagtrail sql` on a store of
// its engine (SQLite's json_each and byte-order text have other spellings on PostgreSQL).

import { pgReportQuery } from "./pg/reportQueries.ts";
import { type ReportParams, type ReportQueryName, reportQuery } from "./reportQueries.ts";

export interface PrintedQuery {
  sqlite: string;
  postgres: string;
  /** The values both texts bind, by name, as `flagtrail sql --param` takes them. */
  params: Record<string, unknown>;
}

export function printedReportQuery(name: ReportQueryName, params: ReportParams): PrintedQuery {
  const sqlite = reportQuery(name, params);
  const postgres = pgReportQuery(name, params);
  return { sqlite: sqlite.sql, postgres: postgres.sql, params: { ...sqlite.params, ...postgres.params } };
}
