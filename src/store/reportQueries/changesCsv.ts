// The report's three change CSVs (state changes, config edits, unreviewed changes) in one SQLite statement:
// each change of the period once, in time order, with its category and whether unreviewed (reviews.ts's
// rule); apart, the unreviewed rows were read twice (1M month: CPU 2,750 → 2,270 ms). Not printed: the three
// CSV queries stay, test/report/onePass.test.ts checks this against them. PostgreSQL: PG_CHANGES_CSV.
import { reviewEvents } from "./reviews.ts";
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

// unreviewedQuery's window, narrowed (as PG_CHANGES_CSV's): events carry only what the window orders and
// compares, and the verdict is a column of its rows, so SQLite sorts narrow rows and filters in one pass (no
// automatic index over a materialised `SELECT *`); the action-type filter is the outer query's. By name first:
// the sort's comparisons end sooner. The rule-change count probes only records with a summary (written
// together). 1M month: 2.52 → 1.81 G instructions in sqlite3_step, CPU 886 → 695 ms (medians of five).
/** The review rule's verdict on an event of window `w` (by entity, in time order): a change no approval covers. */
export const UNREVIEWED_VERDICT = `is_approval = 0 AND occurred_at >= @start AND occurred_at < @end
           AND NOT (coalesce(lag(is_approval) OVER w, 0) = 1 AND lag(occurred_at) OVER w >= occurred_at - @reviewWindow)
           AS unreviewed`;

const UNREVIEWED_SEQS = `${reviewEvents(() => "", "")},
ordered AS (
  SELECT seq,
         ${UNREVIEWED_VERDICT}
  FROM events
  WINDOW w AS (PARTITION BY name, kind ORDER BY occurred_at, is_approval DESC, seq)
),
unreviewed AS (
  SELECT seq FROM ordered WHERE unreviewed
)`;

export const CHANGES_CSV_SQL = `WITH ${UNREVIEWED_SEQS}
SELECT a.occurred_at, a.id, a.updated_by, a.updated_by_user_id, a.modifier_email, a.name, a.action_type,
       a.change_log, s.summary AS rule_diff_summary, c.category,
       CASE WHEN a.seq IN (SELECT seq FROM unreviewed) THEN 1 ELSE 0 END AS unreviewed,
       CASE WHEN c.category = 'config_edit' AND s.audit_log_id IS NOT NULL
            THEN (SELECT count(*) FROM rule_changes rc WHERE rc.audit_log_id = a.id) ELSE 0 END AS rule_changes
FROM action_type_categories c
CROSS JOIN audit_logs a
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category IN ('experiment_state_change', 'config_edit') AND a.action_type = c.action_type
  AND ${period("a")}
ORDER BY a.occurred_at, a.seq`;
