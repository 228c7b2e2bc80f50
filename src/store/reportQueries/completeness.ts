// The completeness section's reads.
import { ENTITY_BACKLOG_SQL } from "../entityBacklog.ts";

/** Shown to the reader beside the count of records without an instant: how to list them. */
export const UNPLACED_RECORDS_SQL = "SELECT * FROM audit_logs WHERE occurred_at IS NULL";

export const COMPLETENESS_QUERIES = {
  entityBacklog: ENTITY_BACKLOG_SQL,

  unplaced: "SELECT count(*) AS records FROM audit_logs WHERE occurred_at IS NULL",

  // Quarantined records not stored valid under the same id, once per id as coverage counts them. Of the
  // period: dated on one of its server days, or undated and returned by a request within them. `maybe`:
  // undated and returned by a request reaching beyond them (docs/reports.md, Completeness).
  quarantined: `WITH held AS (
  SELECT max(CASE WHEN q.server_day IS NOT NULL
                    THEN CASE WHEN q.server_day >= @serverFromDay AND q.server_day <= @serverToDay THEN 1 ELSE 0 END
                  WHEN q.day_min >= @serverFromDay AND q.day_max <= @serverToDay THEN 1 ELSE 0 END) AS inside,
         max(CASE WHEN q.server_day IS NULL AND q.day_min <= @serverToDay AND q.day_max >= @serverFromDay
                  THEN 1 ELSE 0 END) AS reaches
  FROM quarantine q
  WHERE NOT EXISTS (SELECT 1 FROM audit_logs a WHERE a.id = q.record_id)
  GROUP BY coalesce(q.record_id, q.raw_hash)
)
SELECT coalesce(sum(inside), 0) AS records, coalesce(sum(CASE WHEN inside = 0 THEN reaches ELSE 0 END), 0) AS maybe
FROM held`,

  // The local count recounted in this snapshot as the sync counts (coverageCounts.ts), not trusted from sync.
  coverage: `WITH cov AS (
  SELECT c.*,
         CASE WHEN c.filter_key = 'all' THEN NULL
              ELSE '["' || replace(substr(c.filter_key, 7), ',', '","') || '"]' END AS types_json
  FROM coverage c
  WHERE c.day >= @serverFromDay AND c.day <= @serverToDay
)
SELECT c.day, c.filter_key, c.server_total, c.local_count AS local_count_at_sync, c.day_closed, c.checked_at,
       (SELECT count(*) FROM audit_logs a
        WHERE a.server_day = c.day AND a.id NOT IN (SELECT audit_log_id FROM listed_days)
          AND (c.types_json IS NULL OR a.action_type IN (SELECT value FROM json_each(c.types_json))))
       + (SELECT count(*) FROM listed_days l JOIN audit_logs a ON a.id = l.audit_log_id
          WHERE l.day = c.day
            AND (c.types_json IS NULL OR a.action_type IN (SELECT value FROM json_each(c.types_json))))
       + (SELECT count(DISTINCT coalesce(q.record_id, q.raw_hash)) FROM quarantine q
          WHERE coalesce(q.server_day, CASE WHEN q.day_min = q.day_max THEN q.day_min END) = c.day
            AND (q.record_id IS NULL OR q.record_id NOT IN (SELECT id FROM audit_logs))
            AND (c.types_json IS NULL
                 OR json_extract(q.raw, '$.actionType') IN (SELECT value FROM json_each(c.types_json))))
         AS local_count
FROM cov c
ORDER BY c.day COLLATE "binary", c.filter_key COLLATE "binary"`,
} as const;
