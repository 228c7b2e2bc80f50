-- Views for the compliance questions and a full-text index; drizzle-kit cannot generate these, so
-- they live in this custom migration (npx drizzle-kit generate --custom). Columns of both views are a
-- documented interface (README "Views"): add columns at the end, never rename.
CREATE VIEW `experiment_state_changes` AS
SELECT a.id, a.seq, a.occurred_at, a.server_day, a.date_text, a.time_text, a.action_type, c.category,
       a.name, a.change_log, a.updated_by, a.updated_by_user_id, a.modifier_email, a.tags,
       s.summary AS rule_diff_summary
FROM audit_logs a
JOIN action_type_categories c ON c.action_type = a.action_type AND c.category = 'experiment_state_change'
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id;
--> statement-breakpoint
CREATE VIEW `config_edits` AS
SELECT a.id, a.seq, a.occurred_at, a.server_day, a.date_text, a.time_text, a.action_type, c.category,
       a.name, a.change_log, a.updated_by, a.updated_by_user_id, a.modifier_email, a.tags,
       s.summary AS rule_diff_summary
FROM audit_logs a
JOIN action_type_categories c ON c.action_type = a.action_type AND c.category = 'config_edit'
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id;
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
--> statement-breakpoint
-- Index whatever a store created before this migration already holds.
INSERT INTO audit_logs_fts (audit_logs_fts) VALUES ('rebuild');
