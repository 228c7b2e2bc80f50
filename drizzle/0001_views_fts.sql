-- Views for the compliance questions and a full-text index. drizzle-kit cannot generate these, so they
-- live in this custom migration (npx drizzle-kit generate --custom). Columns of both views are a
-- documented interface (README "Views"): add columns at the end, never rename.
-- The views are driven from the category list: CROSS JOIN makes SQLite loop over the category's action
-- types and read audit_logs through (action_type, occurred_at), so a period query touches only that
-- category's records instead of every record of the period.
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
--> statement-breakpoint
-- External-content FTS5 keyed by seq (stable, unlike the implicit rowid, across VACUUM).
CREATE VIRTUAL TABLE `audit_logs_fts` USING fts5(
  name, change_log, updated_by,
  content = 'audit_logs', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `audit_logs_fts_after_insert` AFTER INSERT ON `audit_logs` BEGIN
  INSERT INTO audit_logs_fts (rowid, name, change_log, updated_by)
  VALUES (new.seq, new.name, new.change_log, new.updated_by);
END;
--> statement-breakpoint
-- Records are never updated or deleted by flagtrail; the index follows anyway if someone does.
CREATE TRIGGER `audit_logs_fts_after_delete` AFTER DELETE ON `audit_logs` BEGIN
  INSERT INTO audit_logs_fts (audit_logs_fts, rowid, name, change_log, updated_by)
  VALUES ('delete', old.seq, old.name, old.change_log, old.updated_by);
END;
--> statement-breakpoint
CREATE TRIGGER `audit_logs_fts_after_update` AFTER UPDATE ON `audit_logs` BEGIN
  INSERT INTO audit_logs_fts (audit_logs_fts, rowid, name, change_log, updated_by)
  VALUES ('delete', old.seq, old.name, old.change_log, old.updated_by);
  INSERT INTO audit_logs_fts (rowid, name, change_log, updated_by)
  VALUES (new.seq, new.name, new.change_log, new.updated_by);
END;
