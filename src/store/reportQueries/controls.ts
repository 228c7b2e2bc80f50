// What the controls read from a report snapshot (`flagtrail check` and the report's Controls section alike):
// the period's changes (who, change log, category: an approval covers its kind), the waivers, the last sync.
export const CONTROL_QUERIES = {
  controlChanges: `SELECT id, occurred_at, name, action_type, updated_by, updated_by_user_id, change_log, category, seq
FROM (
  SELECT id, seq, occurred_at, name, action_type, updated_by, updated_by_user_id, change_log, category
  FROM experiment_state_changes WHERE occurred_at >= @start AND occurred_at < @end
  UNION ALL
  SELECT id, seq, occurred_at, name, action_type, updated_by, updated_by_user_id, change_log, category
  FROM config_edits WHERE occurred_at >= @start AND occurred_at < @end
) changes
ORDER BY occurred_at, seq`,
  controlWaivers: `SELECT seq, finding_id, action, reason, by_name, expires, created_at, hash, chain_hash
FROM control_waivers ORDER BY seq`,
  controlLastSync: `SELECT max(finished_at) AS at FROM sync_runs WHERE outcome = 'ok'`,
} as const;
