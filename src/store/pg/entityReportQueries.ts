// src/store/entityReportQueries.ts's queries in PostgreSQL's dialect (same names, parameters and row
// order; the notes at the top of ./reportQueries.ts say what differs and why).
import { VERSIONED_CONFIG_EDITS } from "../../api/entityActions.ts";

const C = 'COLLATE "C"';
const VERSIONED = `(${VERSIONED_CONFIG_EDITS.map((t) => `'${t}'`).join(", ")})`;
const TYPES =
  "(@types::json IS NULL OR a.action_type IN (SELECT value FROM json_array_elements_text(@types::json)))";

const IMPLIED_STATUS = `implied(action_type, status) AS (VALUES
  ('experiment_create', 'setup'), ('schedule_experiment_start', 'setup'),
  ('experiment_start', 'active'), ('experiment_restart', 'active'),
  ('experiment_pause_assignment', 'assignment_stopped'), ('experiment_decision_make', 'decision_made'),
  ('experiment_abandon', 'abandoned'), ('experiment_stopped', 'experiment_stopped'),
  ('archive_experiment', 'archived'))`;

const CURRENT = `current_states AS (
  SELECT s.* FROM experiment_snapshots s
  WHERE s.entity_seq = (SELECT max(s2.entity_seq) FROM experiment_snapshots s2 WHERE s2.experiment_id = s.experiment_id))`;

export const PG_ENTITY_REPORT_QUERIES = {
  configEditVersionChanges: `SELECT a.occurred_at, a.id, a.name, a.action_type, a.updated_by, l.version,
       c.field, c.path, c.change, c.old_value, c.new_value
FROM audit_logs a
JOIN config_edit_links l ON l.audit_log_id = a.id
LEFT JOIN config_version_changes c ON c.config_key = l.config_key AND c.version = l.version
WHERE a.occurred_at >= @start AND a.occurred_at < @end AND ${TYPES}
  AND a.changes::json ->> 'rules' IS NULL
ORDER BY a.occurred_at, a.seq, c.id NULLS FIRST`,

  versionsWithoutRecord: `SELECT v.config_key, v.version, v.last_modified_time, v.last_modifier_name,
       v.last_modifier_id, v.first_seen_at
FROM config_versions v
WHERE v.last_modified_time >= @start AND v.last_modified_time < @end
  AND NOT EXISTS (SELECT 1 FROM config_edit_links l WHERE l.config_key = v.config_key AND l.version = v.version)
ORDER BY v.last_modified_time, v.config_key ${C}, v.version`,

  editsWithoutVersion: `SELECT a.occurred_at, a.id, a.name, a.action_type, a.updated_by, f.outcome AS last_read,
       f.fetched_at AS read_at
FROM audit_logs a
JOIN entity_fetches f ON f.id = (SELECT max(f2.id) FROM entity_fetches f2
  WHERE f2.kind = 'config_versions' AND f2.entity_key = a.name AND f2.outcome <> 'forbidden')
WHERE a.occurred_at >= @start AND a.occurred_at < @end AND ${TYPES}
  AND a.action_type IN ${VERSIONED} AND f.audit_seq >= a.seq
  AND NOT EXISTS (SELECT 1 FROM config_edit_links l WHERE l.audit_log_id = a.id)
ORDER BY a.occurred_at, a.seq`,

  experimentContradictions: `WITH ${IMPLIED_STATUS},
${CURRENT},
timeline AS (
  SELECT cur.experiment_id, a.action_type, a.occurred_at, i.status AS implied_status,
         row_number() OVER (PARTITION BY cur.experiment_id ORDER BY a.occurred_at DESC, a.seq DESC) AS rn
  FROM current_states cur
  JOIN audit_logs a ON a.name = cur.name AND a.occurred_at <= cur.taken_at
  JOIN implied i ON i.action_type = a.action_type)
SELECT cur.name, cur.experiment_id, cur.layer_id, cur.status, cur.taken_at, t.action_type AS last_action,
       t.occurred_at AS last_at, t.implied_status
FROM current_states cur
LEFT JOIN timeline t ON t.experiment_id = cur.experiment_id AND t.rn = 1
WHERE (t.implied_status IS NULL AND cur.status <> 'setup') OR t.implied_status <> cur.status
ORDER BY cur.name ${C}, cur.experiment_id ${C}`,

  experimentCurrentStates: `WITH ${CURRENT}
SELECT cur.name, cur.status, cur.taken_at, cur.raw::json ->> 'decisionReason' AS decision_reason,
       cur.raw::json ->> 'launchedGroupID' AS launched_group_id,
       (SELECT g.value ->> 'name' FROM json_array_elements(
          CASE WHEN json_typeof(cur.raw::json -> 'groups') = 'array' THEN cur.raw::json -> 'groups' ELSE '[]'::json END) g
        WHERE g.value ->> 'id' = cur.raw::json ->> 'launchedGroupID') AS launched_group
FROM current_states cur
ORDER BY cur.name ${C}, cur.taken_at`,

  entityReads: "SELECT count(*) AS records FROM entity_fetches",
} as const;
