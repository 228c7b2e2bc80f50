// The overview's and executive summary's counts (SQLite): records of the period, by action type, by
// person, per day, and distinct entities.
import { period, scoped, TYPES } from "./scope.ts";

export const OVERVIEW_QUERIES = {
  recordCount: `SELECT count(*) AS records
FROM audit_logs a
WHERE ${period("a")}`,

  byActionType: `SELECT a.action_type, coalesce(c.category, 'uncategorised') AS category, count(*) AS records
FROM audit_logs a
LEFT JOIN action_type_categories c ON c.action_type = a.action_type
WHERE ${period("a")}
GROUP BY a.action_type
ORDER BY records DESC, a.action_type`,

  byPerson: `SELECT a.updated_by_user_id, max(a.updated_by) AS updated_by, max(a.modifier_email) AS email,
       count(*) AS records
FROM audit_logs a
WHERE ${period("a")}
GROUP BY a.updated_by_user_id, CASE WHEN a.updated_by_user_id IS NULL THEN a.updated_by END
ORDER BY records DESC, updated_by`,

  daily: `WITH days AS (
  SELECT json_extract(value, '$.day') AS day, json_extract(value, '$.start') AS day_start,
         json_extract(value, '$.end') AS day_end
  FROM json_each(@days)
)
SELECT d.day, count(a.id) AS records
FROM days d
LEFT JOIN audit_logs a ON a.occurred_at >= d.day_start AND a.occurred_at < d.day_end
  AND ${scoped("a", TYPES)}
GROUP BY d.day
ORDER BY d.day`,

  // The executive summary's counts: distinct entity names of the period.
  entityCount: `SELECT count(DISTINCT a.name) AS records
FROM audit_logs a
WHERE ${period("a")}`,
} as const;
