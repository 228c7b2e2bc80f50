// The report's SQLite variants, where the one text parses each record's JSON of the period for a virtual
// column (action_type, name, id) that an index holds. Same parameters and rows in the same order
// (test/report/sqliteVariants.test.ts). CPU ms, 1M-record store's month, medians: byActionType 200 → 10,
// entityCount 145 → 45, byPerson 220 → 175 (964 → 734 M instructions in sqlite3_step).
import type { ReportQueryName } from "../reportQueries.ts";
import { scoped, TYPES } from "./scope.ts";

/** The store's action types after the type filter, a seek each in the action_type index (a skip scan). */
const ACTION_TYPES = `WITH RECURSIVE types(action_type) AS (
  SELECT min(action_type) FROM audit_logs
  UNION ALL
  SELECT (SELECT min(a.action_type) FROM audit_logs a WHERE a.action_type > t.action_type)
  FROM types t WHERE t.action_type IS NOT NULL
),
wanted AS MATERIALIZED (
  SELECT t.action_type FROM types t
  WHERE t.action_type IS NOT NULL AND ${scoped("t", TYPES)}
)`;

export const SQLITE_VARIANTS: Partial<Record<ReportQueryName, string>> = {
  // Each action type's records of the period counted in the index on (action_type, occurred_at).
  byActionType: `${ACTION_TYPES},
counted AS MATERIALIZED (
  SELECT w.action_type,
         (SELECT count(*) FROM audit_logs a
          WHERE a.action_type = w.action_type AND a.occurred_at >= @start AND a.occurred_at < @end) AS records
  FROM wanted w
)
SELECT n.action_type, coalesce(c.category, 'uncategorised') AS category, n.records
FROM counted n
LEFT JOIN action_type_categories c ON c.action_type = n.action_type
WHERE n.records > 0
ORDER BY n.records DESC, n.action_type COLLATE "binary"`,

  // The people's names read from the same index, sorted by seq so that the table is read in its own order
  // (in the index's, a page is read again for each action type it holds); the one text's groups and ties.
  byPerson: `${ACTION_TYPES},
people AS MATERIALIZED (
  SELECT a.seq, a.updated_by
  FROM wanted w
  JOIN audit_logs a ON a.action_type = w.action_type AND a.occurred_at >= @start AND a.occurred_at < @end
  ORDER BY a.seq
)
SELECT a.updated_by_user_id, max(p.updated_by COLLATE "binary") AS updated_by,
       max(a.modifier_email COLLATE "binary") AS email, count(*) AS records
FROM people p
JOIN audit_logs a ON a.seq = p.seq
GROUP BY a.updated_by_user_id, CASE WHEN a.updated_by_user_id IS NULL THEN p.updated_by END
ORDER BY records DESC, updated_by NULLS FIRST`,

  // The names read from the same index, which holds them.
  entityCount: `${ACTION_TYPES}
SELECT count(DISTINCT a.name COLLATE "binary") AS records
FROM wanted w
JOIN audit_logs a ON a.action_type = w.action_type AND a.occurred_at >= @start AND a.occurred_at < @end`,
};
