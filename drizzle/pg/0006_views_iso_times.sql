-- The ISO-text time columns of drizzle/0007_views_iso_times.sql on SQLite, same names, same text
-- (custom migration: npx drizzle-kit generate --custom --config drizzle.pg.config.ts).
DROP VIEW "experiment_state_changes";
--> statement-breakpoint
CREATE VIEW "experiment_state_changes" AS
SELECT a.id, a.seq, a.occurred_at, a.server_day, a.date_text, a.time_text, a.action_type, c.category,
       a.name, a.change_log, a.updated_by, a.updated_by_user_id, a.modifier_email, a.tags,
       s.summary AS rule_diff_summary,
       CASE WHEN a.occurred_at IS NOT NULL THEN to_char(to_timestamp(a.occurred_at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.' || lpad((a.occurred_at % 1000)::text, 3, '0') || 'Z' END AS occurred_at_iso
FROM action_type_categories c
JOIN audit_logs a ON a.action_type = c.action_type
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category = 'experiment_state_change';
--> statement-breakpoint
DROP VIEW "config_edits";
--> statement-breakpoint
CREATE VIEW "config_edits" AS
SELECT a.id, a.seq, a.occurred_at, a.server_day, a.date_text, a.time_text, a.action_type, c.category,
       a.name, a.change_log, a.updated_by, a.updated_by_user_id, a.modifier_email, a.tags,
       s.summary AS rule_diff_summary,
       CASE WHEN a.occurred_at IS NOT NULL THEN to_char(to_timestamp(a.occurred_at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.' || lpad((a.occurred_at % 1000)::text, 3, '0') || 'Z' END AS occurred_at_iso
FROM action_type_categories c
JOIN audit_logs a ON a.action_type = c.action_type
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category = 'config_edit';
--> statement-breakpoint
DROP VIEW "config_version_history";
--> statement-breakpoint
CREATE VIEW "config_version_history" AS
SELECT v.config_key, v.version, v.last_modified_time, v.last_modifier_id, v.last_modifier_name,
       l.audit_log_id, a.action_type, a.updated_by, c.field, c.path, c.change, c.old_value, c.new_value,
       CASE WHEN v.last_modified_time IS NOT NULL THEN to_char(to_timestamp(v.last_modified_time / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.' || lpad((v.last_modified_time % 1000)::text, 3, '0') || 'Z' END AS last_modified_time_iso
FROM config_versions v
LEFT JOIN config_edit_links l ON l.config_key = v.config_key AND l.version = v.version
LEFT JOIN audit_logs a ON a.id = l.audit_log_id
LEFT JOIN config_version_changes c ON c.config_key = v.config_key AND c.version = v.version;
--> statement-breakpoint
DROP VIEW "experiment_current_states";
--> statement-breakpoint
CREATE VIEW "experiment_current_states" AS
SELECT s.experiment_id, s.name, s.layer_id, s.status, s.taken_at,
       s.raw::json -> 'startTime' AS start_time, s.raw::json -> 'endTime' AS end_time,
       s.raw::json ->> 'decisionReason' AS decision_reason,
       s.raw::json ->> 'launchedGroupID' AS launched_group_id,
       to_char(to_timestamp(s.taken_at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || '.' || lpad((s.taken_at % 1000)::text, 3, '0') || 'Z' AS taken_at_iso
FROM experiment_snapshots s
WHERE s.entity_seq = (SELECT max(s2.entity_seq) FROM experiment_snapshots s2 WHERE s2.experiment_id = s.experiment_id);
