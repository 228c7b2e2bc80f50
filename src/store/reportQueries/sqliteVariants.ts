// The report's SQLite variants: where the one text makes SQLite parse every record's JSON of the period
// for a column (action_type, name and id are virtual columns read from raw_data) that an index holds.
// Same parameters, same rows in the same order (test/report/sqliteVariants.test.ts).
// Measured on the one-month report of a 1M-record store (bench/report.ts; CPU ms, same process, medians):
// byActionType 200 → 10, entityCount 145 → 45; byPerson, the query alone, 220 → 175 ms (medians of three
// runs alternating) and 964 → 734 M instructions inside sqlite3_step (callgrind).
import type { ReportQueryName } from "../reportQueries.ts";
import { scoped, TYPES } from "./scope.ts";

/**
 * The store's action types, one index seek each on the index led by action_type (a skip scan), after
 * the action-type filter: a handful of rows however many records there are.
 */
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

  // The people's names read from the same index; sorted by seq first, so that the table is then read in
  // its own order (in the index's, a page is read again for each action type it holds). The one text's
  // groups, so ties come out in the same order.
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
