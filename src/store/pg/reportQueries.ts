// The report's PostgreSQL variants: queries whose one text (src/store/reportQueries/, which the Markdown
// prints and still runs here, only slower) PostgreSQL plans much slower, each with its measurement. Same
// parameters and rows in the same order (test/pg/sameHistory.test.ts). In PostgreSQL's dialect: byte-order
// sorts as COLLATE "C", JSON lists as json_array_elements.
import { UNREVIEWED_VERDICT } from "../reportQueries/changesCsv.ts";
import { UNREVIEWED_COLUMNS, unreviewedQueries } from "../reportQueries/reviews.ts";
import type { ReportQueryName } from "../reportQueries.ts";

const C = 'COLLATE "C"';
const TYPES =
  "(@types::json IS NULL OR ch.action_type IN (SELECT value FROM json_array_elements_text(@types::json)))";

// As `a`, `columns` of the records of one action type (`type`) from `from` to @end, found through the index
// on (action_type, occurred_at): LATERAL with OFFSET 0 is not flattened, so it is probed per type.
const ofType = (type: string, columns: string, from = "@start") => `CROSS JOIN LATERAL (
  SELECT ${columns} FROM audit_logs r
  WHERE r.action_type = ${type} AND r.occurred_at >= ${from} AND r.occurred_at < @end
  OFFSET 0
) a`;

// The review flows' approvals in the window's events (`more`: columns after the id, each ending in a comma).
const approvals = (
  more: string,
) => `  SELECT f.value ->> 'entity', a.name, a.occurred_at, a.seq, a.id,${more} 1
  FROM json_array_elements(@flows::json) f
  JOIN audit_logs a ON a.action_type = f.value ->> 'accept'
  WHERE f.value ->> 'entity' IN ('experiment', 'config')
    AND a.occurred_at >= @reviewStart AND a.occurred_at < @end`;

// The unreviewed changes: both categories in one join on the category table, so the window's two months
// of the action-type index are read once (not once per view). The verdict is one boolean column: filtered
// on several predicates over window outputs, PostgreSQL estimated 1 row for ~25,000 (a nested loop).
const UNREVIEWED = `WITH events AS (
  SELECT CASE c.category WHEN 'config_edit' THEN 'config' ELSE 'experiment' END AS kind, a.name, a.occurred_at,
         a.seq, a.id, a.action_type, c.category, a.updated_by, 0 AS is_approval
  FROM action_type_categories c
  JOIN audit_logs a ON a.action_type = c.action_type
  WHERE c.category IN ('experiment_state_change', 'config_edit')
    AND c.action_type NOT IN (SELECT value FROM json_array_elements_text(@exempt::json))
    AND a.occurred_at >= @reviewStart AND a.occurred_at < @end
  UNION ALL
${approvals(" a.action_type, NULL, a.updated_by,")}
),
ordered AS (
  SELECT *,
         ${UNREVIEWED_VERDICT}
  FROM events
  WINDOW w AS (PARTITION BY kind ${C}, name ${C} ORDER BY occurred_at, is_approval DESC, seq)
)
SELECT ${UNREVIEWED_COLUMNS}
FROM ordered ch
WHERE ch.unreviewed
  AND ${TYPES}
ORDER BY ch.occurred_at, ch.seq`;

// PG_CHANGES_CSV's unreviewed flags as one JSON list (as rows, 25k ids cost the client twice the CPU):
// UNREVIEWED's window over narrow events (what it orders and compares, and the id, per action type from the
// covering index on action_type), by name first (the sort compares names, which differ, before kinds). Not
// UNREVIEWED's wide rows and hash join: EXPLAIN ANALYZE on the 1M month 1,538 → 1,191 ms (medians of 7).
export const PG_UNREVIEWED_IDS = `WITH events AS (
  SELECT CASE c.category WHEN 'config_edit' THEN 'config' ELSE 'experiment' END AS kind, a.name,
         a.occurred_at, a.seq, a.id, 0 AS is_approval
  FROM action_type_categories c
  ${ofType("c.action_type", "name, occurred_at, seq, id", "@reviewStart")}
  WHERE c.category IN ('experiment_state_change', 'config_edit')
    AND c.action_type NOT IN (SELECT value FROM json_array_elements_text(@exempt::json))
  UNION ALL
${approvals("")}
)
SELECT json_agg(o.id) AS ids FROM (
  SELECT id,
         ${UNREVIEWED_VERDICT}
  FROM events
  WINDOW w AS (PARTITION BY name ${C}, kind ${C} ORDER BY occurred_at, is_approval DESC, seq)
) o
WHERE o.unreviewed`;

/**
 * The change CSVs in one read (SQLite's: reportQueries/changesCsv.ts; unreviewed: PG_UNREVIEWED_IDS'), client
 * CPU on the 1M month 2.1–2.3 → 1.8–2.0 s. Per action type (ofType): the one text's join scanned the month
 * (82,192 rows for 9,787: 329 → 139 ms). Only records with a rule-diff summary can have rule changes
 * (ruleDiffs.ts writes both).
 */
export const PG_CHANGES_CSV = `SELECT a.occurred_at, a.id, a.updated_by, a.updated_by_user_id, a.modifier_email,
       a.name, a.action_type, a.change_log, s.summary AS rule_diff_summary, c.category, 0 AS unreviewed,
       CASE WHEN c.category = 'config_edit' AND s.audit_log_id IS NOT NULL
         THEN (SELECT count(*) FROM rule_changes rc WHERE rc.audit_log_id = a.id) ELSE 0 END AS rule_changes
FROM action_type_categories c
${ofType(
  "c.action_type",
  `occurred_at, seq, id, updated_by, updated_by_user_id, modifier_email, name,
  action_type, change_log`,
)}
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category IN ('experiment_state_change', 'config_edit')
  AND ${TYPES.replaceAll("ch.", "a.")}
ORDER BY a.occurred_at, a.seq`;

export const PG_VARIANTS: Partial<Record<ReportQueryName, string>> = {
  // The same per action type for the rejections: the one text's IN over @rejects was a scan of the
  // month's records (82,192) for 979 on 1M: EXPLAIN ANALYZE 297 ms.
  rejected: `SELECT a.occurred_at, a.name, a.action_type, a.updated_by, a.change_log, a.id
FROM (SELECT DISTINCT value AS action_type FROM json_array_elements_text(@rejects::json)) t
${ofType("t.action_type", "occurred_at, seq, name, action_type, updated_by, change_log, id")}
WHERE ${TYPES.replaceAll("ch.", "a.")}
ORDER BY a.occurred_at, a.seq`,

  ...unreviewedQueries(UNREVIEWED, C),

  // One row per flow and action type, whose records of the window are found through the index on
  // (action_type, occurred_at), ofType: on 1M ~30 ms. An IN over the flow's four columns scanned the window
  // against each flow (seconds); a plain join hashed every record of the window (PostgreSQL counts 100 rows
  // for any json_array_elements): ~150 ms.
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
${ofType(
  "t.action_type",
  `seq, id, occurred_at, name, action_type, change_log, updated_by,
  updated_by_user_id`,
  "@reviewStart",
)}
ORDER BY f.entity ${C}, a.name ${C}, a.occurred_at, a.action_type <> f.create_type, a.seq`,
};
