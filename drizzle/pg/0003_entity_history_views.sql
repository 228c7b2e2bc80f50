-- The entity-history views of drizzle/0005_entity_history.sql on SQLite, same columns in the same order
-- (custom migration: npx drizzle-kit generate --custom --config drizzle.pg.config.ts).
-- Each config version with the audit record that produced it and its field-level changes.
CREATE VIEW "config_version_history" AS
SELECT v.config_key, v.version, v.last_modified_time, v.last_modifier_id, v.last_modifier_name,
       l.audit_log_id, a.action_type, a.updated_by, c.field, c.path, c.change, c.old_value, c.new_value
FROM config_versions v
LEFT JOIN config_edit_links l ON l.config_key = v.config_key AND l.version = v.version
LEFT JOIN audit_logs a ON a.id = l.audit_log_id
LEFT JOIN config_version_changes c ON c.config_key = v.config_key AND c.version = v.version;
--> statement-breakpoint
-- Each experiment as its layer last listed it. `->` keeps JSON types (a number stays a number), as
-- SQLite's json_extract does.
CREATE VIEW "experiment_current_states" AS
SELECT s.experiment_id, s.name, s.layer_id, s.status, s.taken_at,
       s.raw::json -> 'startTime' AS start_time, s.raw::json -> 'endTime' AS end_time,
       s.raw::json ->> 'decisionReason' AS decision_reason,
       s.raw::json ->> 'launchedGroupID' AS launched_group_id
FROM experiment_snapshots s
WHERE s.entity_seq = (SELECT max(s2.entity_seq) FROM experiment_snapshots s2 WHERE s2.experiment_id = s.experiment_id);
