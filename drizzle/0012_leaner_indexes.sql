-- Leaner store (issue 25), SQLite only: two index copies no query needs.
-- - audit_logs_action_type_idx listed seq among its columns; seq is the rowid, and every entry of an
--   index ends with its row's rowid already: the listed seq was a second copy of it (~4 bytes a record).
--   The report reads seq from the rowid the same; none of its orders was read from this index (each
--   query sorts, several action types at once), so its plans keep this index and still read it alone.
-- - rule_changes_rule_id_idx: no query looks rule changes up by rule (they are read by record,
--   rule_changes_audit_log_id_idx). PostgreSQL keeps both as they are.
-- A sync's bulk load that was killed half-way has these in its list of indexes to build again (meta
-- `bulk_load`): they leave that list, the covering index being made here.
-- Hand-written (drizzle-kit generate --custom).
DROP INDEX IF EXISTS `rule_changes_rule_id_idx`;--> statement-breakpoint
DROP INDEX IF EXISTS `audit_logs_action_type_idx`;--> statement-breakpoint
CREATE INDEX `audit_logs_action_type_idx` ON `audit_logs` (`action_type`,`occurred_at`,`name`,`updated_by`,`id`);--> statement-breakpoint
UPDATE `meta` SET `value` = (
  SELECT json_group_array(json(e.value)) FROM json_each(meta.value) e
  WHERE json_extract(e.value, '$.name') NOT IN ('rule_changes_rule_id_idx', 'audit_logs_action_type_idx')
) WHERE `key` = 'bulk_load';
