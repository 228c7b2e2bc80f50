// The report's PostgreSQL variants: the queries whose one text (src/store/reportQueries/, printed in the
// Markdown and run on SQLite) PostgreSQL's planner runs much slower, each with the measurement that
// keeps it here. Same parameters, same rows in the same order (test/pg/sameHistory.test.ts). The
// text the Markdown prints is still the one text: it runs on PostgreSQL too, only slower.
// Spelled in PostgreSQL's own dialect: byte-order sorts as COLLATE "C", JSON lists as json_array_elements.
import type { ReportQueryName } from "../reportQueries.ts";

const C = 'COLLATE "C"';
const TYPES =
  "(@types::json IS NULL OR ch.action_type IN (SELECT value FROM json_array_elements_text(@types::json)))";

// The changes of the period and the 30 days before it (for the window), both categories in one join on the
// category table, so the two months of the action-type index are read once (through the two views: once
// per view, each with parallel workers); the approvals of the flows' entities.
// The window's verdict is one boolean column: filtered on several predicates over window outputs,
// PostgreSQL estimated 1 row for ~25,000 and joined the rule-diff summaries by a nested loop.
const UNREVIEWED_ORDERED = `WITH events AS (
  SELECT CASE c.category WHEN 'config_edit' THEN 'config' ELSE 'experiment' END AS kind, a.name, a.occurred_at,
         a.seq, a.id, a.action_type, c.category, a.updated_by, 0 AS is_approval
  FROM action_type_categories c
  JOIN audit_logs a ON a.action_type = c.action_type
  WHERE c.category IN ('experiment_state_change', 'config_edit')
    AND c.action_type NOT IN (SELECT value FROM json_array_elements_text(@exempt::json))
    AND a.occurred_at >= @reviewStart AND a.occurred_at < @end
  UNION ALL
  SELECT f.value ->> 'entity', a.name, a.occurred_at, a.seq, a.id, a.action_type, NULL, a.updated_by, 1
  FROM json_array_elements(@flows::json) f
  JOIN audit_logs a ON a.action_type = f.value ->> 'accept'
  WHERE f.value ->> 'entity' IN ('experiment', 'config')
    AND a.occurred_at >= @reviewStart AND a.occurred_at < @end
),
ordered AS (
  SELECT *,
         is_approval = 0 AND occurred_at >= @start AND occurred_at < @end
           AND NOT (coalesce(lag(is_approval) OVER w, 0) = 1 AND lag(occurred_at) OVER w >= occurred_at - @reviewWindow)
           AS unreviewed
  FROM events
  WINDOW w AS (PARTITION BY kind ${C}, name ${C} ORDER BY occurred_at, is_approval DESC, seq)
)`;

/** The unreviewed changes with `columns` of the window's rows, in time order. */
function unreviewedQuery(columns: string): string {
  return `${UNREVIEWED_ORDERED}
SELECT ${columns}
FROM ordered ch
WHERE ch.unreviewed
  AND ${TYPES}
ORDER BY ch.occurred_at, ch.seq`;
}

/**
 * The changes whose review window leaves them unreviewed, by seq, for PG_CHANGES_CSV: unreviewedQuery's
 * window over narrow events (what it orders and compares, each action type's read from the index on
 * (action_type, occurred_at, seq, name), which holds them), partitioned by name first, as
 * CHANGES_CSV_SQL's is for SQLite: the same partitions, and the sort compares the names, which differ,
 * before the kinds, which mostly do not. The action-type filter is the outer query's. unreviewedQuery's
 * wide rows through the sort, and every record of the two months through the hash join on the
 * categories: the query's EXPLAIN ANALYZE on the 1M store's month 1,538 → 1,191 ms (medians of seven
 * runs alternating, load ~15), with the action-type filter 1,612 → 1,203 (three); same rows.
 */
const UNREVIEWED_SEQS = `events AS (
  SELECT CASE c.category WHEN 'config_edit' THEN 'config' ELSE 'experiment' END AS kind, a.name,
         a.occurred_at, a.seq, 0 AS is_approval
  FROM action_type_categories c
  CROSS JOIN LATERAL (
    SELECT r.name, r.occurred_at, r.seq FROM audit_logs r
    WHERE r.action_type = c.action_type AND r.occurred_at >= @reviewStart AND r.occurred_at < @end
    OFFSET 0
  ) a
  WHERE c.category IN ('experiment_state_change', 'config_edit')
    AND c.action_type NOT IN (SELECT value FROM json_array_elements_text(@exempt::json))
  UNION ALL
  SELECT f.value ->> 'entity', a.name, a.occurred_at, a.seq, 1
  FROM json_array_elements(@flows::json) f
  JOIN audit_logs a ON a.action_type = f.value ->> 'accept'
  WHERE f.value ->> 'entity' IN ('experiment', 'config')
    AND a.occurred_at >= @reviewStart AND a.occurred_at < @end
),
unreviewed AS MATERIALIZED (
  SELECT o.seq FROM (
    SELECT seq,
           is_approval = 0 AND occurred_at >= @start AND occurred_at < @end
             AND NOT (coalesce(lag(is_approval) OVER w, 0) = 1 AND lag(occurred_at) OVER w >= occurred_at - @reviewWindow)
             AS unreviewed
    FROM events
    WINDOW w AS (PARTITION BY name ${C}, kind ${C} ORDER BY occurred_at, is_approval DESC, seq)
  ) o
  WHERE o.unreviewed
)`;

/**
 * The rows of the report's three change CSVs in one read (its `changes`; SQLite runs the one text,
 * src/store/reportQueries/changesCsv.ts): each change of the period with its category, its rule changes
 * and whether the review window left it unreviewed.
 * Each action type of the two categories is read through the index on (action_type, occurred_at): the
 * one text's join was planned as a scan of every record of the month through the time index, hashed
 * against the categories' action types (82,192 heap rows for 9,787 on 1M: EXPLAIN ANALYZE 329 ms; this
 * shape 139 ms, same machine and load). LATERAL with OFFSET 0 is not flattened, as in reviewRecords
 * below. A record's rule changes are written and deleted with its summary (src/store/ruleDiffs.ts), so
 * one without a summary has none: the count's index probe (22,497 a month on 1M, most finding nothing)
 * runs only for those with one.
 * One read instead of the three CSV queries: the report's client CPU on the 1M store's month 2.1–2.3 →
 * 1.8–2.0 s (three runs each, alternating; same CSV bytes).
 */
export const PG_CHANGES_CSV = `WITH ${UNREVIEWED_SEQS}
SELECT a.occurred_at, a.id, a.updated_by, a.updated_by_user_id, a.modifier_email, a.name,
       a.action_type, a.change_log, s.summary AS rule_diff_summary, c.category,
       CASE WHEN a.seq IN (SELECT u.seq FROM unreviewed u) THEN 1 ELSE 0 END AS unreviewed,
       CASE WHEN c.category = 'config_edit' AND s.audit_log_id IS NOT NULL
         THEN (SELECT count(*) FROM rule_changes rc WHERE rc.audit_log_id = a.id) ELSE 0 END AS rule_changes
FROM action_type_categories c
CROSS JOIN LATERAL (
  SELECT r.occurred_at, r.seq, r.id, r.updated_by, r.updated_by_user_id, r.modifier_email, r.name,
         r.action_type, r.change_log
  FROM audit_logs r
  WHERE r.action_type = c.action_type AND r.occurred_at >= @start AND r.occurred_at < @end
  OFFSET 0
) a
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category IN ('experiment_state_change', 'config_edit')
  AND ${TYPES.replaceAll("ch.", "a.")}
ORDER BY a.occurred_at, a.seq`;

const UNREVIEWED = unreviewedQuery(
  "ch.occurred_at, ch.name, ch.action_type, ch.category, ch.updated_by, ch.id",
);

export const PG_VARIANTS: Partial<Record<ReportQueryName, string>> = {
  // The same per action type for the rejections: the one text's IN over @rejects was a scan of the
  // month's records (82,192) for 979 on 1M: EXPLAIN ANALYZE 297 ms.
  rejected: `SELECT r.occurred_at, r.name, r.action_type, r.updated_by, r.change_log, r.id
FROM (SELECT DISTINCT value AS action_type FROM json_array_elements_text(@rejects::json)) t
CROSS JOIN LATERAL (
  SELECT a.occurred_at, a.seq, a.name, a.action_type, a.updated_by, a.change_log, a.id
  FROM audit_logs a
  WHERE a.action_type = t.action_type AND a.occurred_at >= @start AND a.occurred_at < @end
  OFFSET 0
) r
WHERE ${TYPES.replaceAll("ch.", "r.")}
ORDER BY r.occurred_at, r.seq`,

  unreviewed: UNREVIEWED,

  unreviewedCount: `SELECT count(*) AS records FROM (\n${UNREVIEWED}\n) AS u`,

  unreviewedSummary: `WITH unreviewed AS (
${UNREVIEWED}
)
SELECT u.name, u.updated_by, u.action_type, count(*) AS changes, 0 AS rule_changes,
       min(u.occurred_at) AS first_at, max(u.occurred_at) AS last_at
FROM unreviewed u
GROUP BY u.name, u.updated_by, u.action_type
ORDER BY u.name ${C}, u.updated_by ${C} NULLS FIRST, u.action_type ${C}`,

  // One row per flow and action type, each type's records of the window found through the index on
  // (action_type, occurred_at): a few thousand of the window's ~160,000 on 1M. (An IN over the flow's
  // four columns was planned as a scan of every record of the window against each flow, re-reading the
  // JSON each time: seconds on 1M. A plain join, as one hash join over every record of the window, since
  // PostgreSQL counts 100 rows for any json_array_elements: ~150 ms. The LATERAL subquery with OFFSET 0
  // is not flattened into the join, so it is probed per action type: ~30 ms.)
  reviewRecords: `WITH flows AS (
  SELECT f.n, f.value ->> 'entity' AS entity, f.value ->> 'create' AS create_type,
         f.value ->> 'accept' AS accept_type, f.value ->> 'reject' AS reject_type,
         f.value ->> 'delete' AS delete_type
  FROM json_array_elements(@flows::json) WITH ORDINALITY AS f(value, n)
),
flow_types AS (
  SELECT DISTINCT f.n, t.action_type
  FROM flows f
  CROSS JOIN unnest(ARRAY[f.create_type, f.accept_type, f.reject_type, f.delete_type]) AS t(action_type)
)
SELECT a.seq, a.id, a.occurred_at, a.name, f.entity,
       CASE a.action_type WHEN f.create_type THEN 'request' WHEN f.accept_type THEN 'accept' ELSE 'close' END
         AS role,
       a.action_type, a.change_log, a.updated_by, a.updated_by_user_id
FROM flow_types t
JOIN flows f ON f.n = t.n
CROSS JOIN LATERAL (
  SELECT r.seq, r.id, r.occurred_at, r.name, r.action_type, r.change_log, r.updated_by, r.updated_by_user_id
  FROM audit_logs r
  WHERE r.action_type = t.action_type AND r.occurred_at >= @reviewStart AND r.occurred_at < @end
  OFFSET 0
) a
ORDER BY f.entity ${C}, a.name ${C}, a.occurred_at, a.action_type <> f.create_type, a.seq`,
};
