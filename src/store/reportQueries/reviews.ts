// The reviews section's reads; PostgreSQL's variants of some: src/store/pg/reportQueries.ts.
import { period } from "./scope.ts";

/** The window's events since @reviewStart: non-exempt changes, the flows' approvals; `more`: columns after seq. */
export const reviewEvents = (more: (change: "e" | "c") => string, approval: string) => `events AS (
  SELECT 'experiment' AS kind, e.name, e.occurred_at, e.seq,${more("e")} 0 AS is_approval
  FROM experiment_state_changes e
  WHERE e.occurred_at >= @reviewStart AND e.occurred_at < @end
    AND e.action_type NOT IN (SELECT value FROM json_each(@exempt))
  UNION ALL
  SELECT 'config', c.name, c.occurred_at, c.seq,${more("c")} 0
  FROM config_edits c
  WHERE c.occurred_at >= @reviewStart AND c.occurred_at < @end
    AND c.action_type NOT IN (SELECT value FROM json_each(@exempt))
  UNION ALL
  SELECT json_extract(f.value, '$.entity'), a.name, a.occurred_at, a.seq,${approval} 1
  FROM json_each(@flows) f
  JOIN audit_logs a ON a.action_type = json_extract(f.value, '$.accept')
  WHERE json_extract(f.value, '$.entity') IN ('experiment', 'config')
    AND a.occurred_at >= @reviewStart AND a.occurred_at < @end
)`;

/** The unreviewed changes with `columns` of the window's rows, in time order. */
const unreviewedQuery = (columns: string) => `WITH ${reviewEvents(
  (t) => ` ${t}.id, ${t}.action_type, ${t}.category, ${t}.updated_by,`,
  " a.id, a.action_type, NULL, a.updated_by,",
)},
ordered AS (
  SELECT *, lag(is_approval) OVER w AS after_approval, lag(occurred_at) OVER w AS previous_at
  FROM events
  WINDOW w AS (PARTITION BY kind, name ORDER BY occurred_at, is_approval DESC, seq)
)
SELECT ${columns}
FROM ordered ch
WHERE ch.is_approval = 0
  AND ${period("ch")}
  AND NOT (coalesce(ch.after_approval, 0) = 1 AND ch.previous_at >= ch.occurred_at - @reviewWindow)
ORDER BY ch.occurred_at, ch.seq`;

export const UNREVIEWED_COLUMNS =
  "ch.occurred_at, ch.name, ch.action_type, ch.category, ch.updated_by, ch.id";

/** The unreviewed changes (`unreviewed`: the window's UNREVIEWED_COLUMNS), their count and summary. */
export const unreviewedQueries = (unreviewed: string, collate: string) => ({
  unreviewed,
  unreviewedCount: `SELECT count(*) AS records FROM (\n${unreviewed}\n) AS u`,
  // The same changes per entity, person and action type, when they are too many to list.
  unreviewedSummary: `WITH unreviewed AS (
${unreviewed}
)
SELECT u.name, u.updated_by, u.action_type, count(*) AS changes, 0 AS rule_changes,
       min(u.occurred_at) AS first_at, max(u.occurred_at) AS last_at
FROM unreviewed u
GROUP BY u.name, u.updated_by, u.action_type
ORDER BY u.name ${collate}, u.updated_by ${collate} NULLS FIRST, u.action_type ${collate}`,
});

export const REVIEW_QUERIES = {
  // Which approval covers which change: docs/reports.md (Reviews). One window pass over the changes and
  // approvals since @reviewStart: each change looks at the event just before it.
  ...unreviewedQueries(unreviewedQuery(UNREVIEWED_COLUMNS), 'COLLATE "binary"'),

  // The same changes as full rows, for their own CSV (the columns of the other two CSVs). Joined on seq,
  // an integer: on the id (text) the one-month 1M-record CSV took 700 ms of CPU instead of 470.
  unreviewedCsv: `WITH unreviewed AS (
${unreviewedQuery("ch.occurred_at, ch.seq")}
)
SELECT a.occurred_at, a.id, a.updated_by, a.updated_by_user_id, a.modifier_email, a.name, a.action_type,
       a.change_log, s.summary AS rule_diff_summary
FROM unreviewed u
JOIN audit_logs a ON a.seq = u.seq
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
ORDER BY a.occurred_at, a.seq`,

  // Every review record of the window, per flow and entity in time order (a request sorts first within
  // its second), for the report's pairing of approvals and requests (src/report/reviewPairing.ts).
  reviewRecords: `WITH flows AS (
  SELECT json_extract(value, '$.entity') AS entity, json_extract(value, '$.create') AS create_type,
         json_extract(value, '$.accept') AS accept_type, json_extract(value, '$.reject') AS reject_type,
         json_extract(value, '$.delete') AS delete_type
  FROM json_each(@flows)
)
SELECT a.seq, a.id, a.occurred_at, a.name, f.entity,
       CASE a.action_type WHEN f.create_type THEN 'request' WHEN f.accept_type THEN 'accept' ELSE 'close' END
         AS role,
       a.action_type, a.change_log, a.updated_by, a.updated_by_user_id
FROM flows f
JOIN audit_logs a ON a.action_type IN (f.create_type, f.accept_type, f.reject_type, f.delete_type)
WHERE a.occurred_at >= @reviewStart AND a.occurred_at < @end
ORDER BY f.entity COLLATE "binary", a.name COLLATE "binary", a.occurred_at, a.action_type <> f.create_type, a.seq`,

  rejected: `SELECT r.occurred_at, r.name, r.action_type, r.updated_by, r.change_log, r.id
FROM audit_logs r
WHERE r.action_type IN (SELECT value FROM json_each(@rejects))
  AND ${period("r")}
ORDER BY r.occurred_at, r.seq`,
} as const;
