// The mutations section's reads: records the service changed after the sync first stored them.
import { scoped, TYPES } from "./scope.ts";

export const MUTATION_QUERIES = {
  mutations: `SELECT r.audit_log_id AS id, a.name, a.action_type, a.occurred_at, r.seen_at, a.raw AS original,
       r.raw AS revision
FROM audit_log_revisions r
JOIN audit_logs a ON a.id = r.audit_log_id
WHERE ((a.occurred_at >= @start AND a.occurred_at < @end) OR (r.seen_at >= @start AND r.seen_at < @end))
  AND ${scoped("a", TYPES)}
ORDER BY a.occurred_at NULLS FIRST, a.seq, r.id`,
  mutationCount: `SELECT count(DISTINCT r.audit_log_id) AS records, count(*) AS revisions
FROM audit_log_revisions r
JOIN audit_logs a ON a.id = r.audit_log_id
WHERE ((a.occurred_at >= @start AND a.occurred_at < @end) OR (r.seen_at >= @start AND r.seen_at < @end))
  AND ${scoped("a", TYPES)}`,
} as const;
