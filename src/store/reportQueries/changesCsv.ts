// The rows of the report's three change CSVs (experiment state changes, config edits, changes with no
// approved review) in one statement, for SQLite: each change of the period once, in time order, with its
// category and whether it is unreviewed (the review rule's one text: unreviewedQuery). The unreviewed
// changes are rows of the other two CSVs with the same columns, so run apart (unreviewedCsv) their rows
// were read from the store, handed over and formatted twice (the one-month report of a 1M-record store:
// CPU 2,750 → 2,270 ms, medians of four runs alternating, bench/report.ts's store). Not printed (the CSVs'
// queries are not). The three CSV queries (experimentStateChangesCsv, configEditsCsv, unreviewedCsv) stay
// as what each file holds, one text each; test/report/onePass.test.ts checks this read against them.
// PostgreSQL runs its variant, PG_CHANGES_CSV (src/store/pg/reportQueries.ts).

import { unreviewedQuery } from "./reviews.ts";
import type { CsvRow } from "./rows.ts";
import { period } from "./scope.ts";

/** A change of the period: its CSV columns, its category, and whether an approved review covers it. */
export interface ChangeCsvRow extends CsvRow {
  category: "experiment_state_change" | "config_edit";
  /** 1 when it is a row of the unreviewed changes' CSV. */
  unreviewed: number;
  /** The record's rule changes (config edits'; 0 for experiment state changes). */
  rule_changes: number;
}

export const CHANGES_CSV_SQL = `WITH unreviewed AS (
${unreviewedQuery("ch.seq")}
)
SELECT a.occurred_at, a.id, a.updated_by, a.updated_by_user_id, a.modifier_email, a.name, a.action_type,
       a.change_log, s.summary AS rule_diff_summary, c.category,
       CASE WHEN a.seq IN (SELECT seq FROM unreviewed) THEN 1 ELSE 0 END AS unreviewed,
       CASE WHEN c.category = 'config_edit'
            THEN (SELECT count(*) FROM rule_changes rc WHERE rc.audit_log_id = a.id) ELSE 0 END AS rule_changes
FROM action_type_categories c
CROSS JOIN audit_logs a
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category IN ('experiment_state_change', 'config_edit') AND a.action_type = c.action_type
  AND ${period("a")}
ORDER BY a.occurred_at, a.seq`;
