-- Same views, same columns, but driven from the category list: CROSS JOIN makes SQLite loop over the
-- category's action types and read audit_logs through (action_type, occurred_at), so a period query
-- touches only that category's records instead of every record of the period.
DROP VIEW IF EXISTS `experiment_state_changes`;
--> statement-breakpoint
DROP VIEW IF EXISTS `config_edits`;
--> statement-breakpoint
CREATE VIEW `experiment_state_changes` AS
SELECT a.id, a.seq, a.occurred_at, a.server_day, a.date_text, a.time_text, a.action_type, c.category,
       a.name, a.change_log, a.updated_by, a.updated_by_user_id, a.modifier_email, a.tags,
       s.summary AS rule_diff_summary
FROM action_type_categories c
CROSS JOIN audit_logs a
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category = 'experiment_state_change' AND a.action_type = c.action_type;
--> statement-breakpoint
CREATE VIEW `config_edits` AS
SELECT a.id, a.seq, a.occurred_at, a.server_day, a.date_text, a.time_text, a.action_type, c.category,
       a.name, a.change_log, a.updated_by, a.updated_by_user_id, a.modifier_email, a.tags,
       s.summary AS rule_diff_summary
FROM action_type_categories c
CROSS JOIN audit_logs a
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category = 'config_edit' AND a.action_type = c.action_type;
