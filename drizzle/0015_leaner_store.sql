-- Leaner store (issue 25), after 0011: two more audit_logs columns stop being copies on disk, with their
-- names, places and values kept: updated_by_user_id and modifier_email are read from raw_data like the
-- others (a string as received; an object e-mail as JSON text, the record's own text without blanks: the
-- same JSON, which is what verify compares). The report reading them per record costs ~4 % more CPU,
-- against ~45 bytes a record. (server_day read from the date text, and rule_changes' whole rules read from
-- the record through a view, saved 35 bytes more but cost ~9 % of ingest CPU: left stored.)
-- A stored column cannot become a generated one in place: the table is made again, as in 0011, its rows
-- copied aside and back in seq order (same seq, raw text, hash and chain bytes). Its indexes are dropped
-- first (the implicit delete of DROP TABLE otherwise updates each) and made again; the full-text index
-- reads the same rowids and texts and stays, its triggers are made again. Foreign keys are deferred: the
-- rows copied back satisfy them before the commit. SQLite only: PostgreSQL keeps its columns.
-- Hand-written (drizzle-kit generate --custom).
PRAGMA defer_foreign_keys = ON;--> statement-breakpoint
DROP TRIGGER IF EXISTS `audit_logs_fts_after_insert`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `audit_logs_fts_after_delete`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `audit_logs_fts_after_update`;--> statement-breakpoint
DROP INDEX IF EXISTS `audit_logs_occurred_at_idx`;--> statement-breakpoint
DROP INDEX IF EXISTS `audit_logs_server_day_idx`;--> statement-breakpoint
DROP INDEX IF EXISTS `audit_logs_action_type_idx`;--> statement-breakpoint
DROP INDEX IF EXISTS `audit_logs_name_idx`;--> statement-breakpoint
CREATE TABLE `audit_logs_0015` AS
  SELECT seq, occurred_at, server_day, first_seen_at, sync_run_id, raw_data, record_hash_bytes, chain_hash_bytes
  FROM audit_logs;--> statement-breakpoint
DROP TABLE `audit_logs`;--> statement-breakpoint
CREATE TABLE `audit_logs` (
	`id` text NOT NULL GENERATED ALWAYS AS (json_extract(raw_data, '$.id')) VIRTUAL,
	`name` text NOT NULL GENERATED ALWAYS AS (json_extract(raw_data, '$.name')) VIRTUAL,
	`action_type` text NOT NULL GENERATED ALWAYS AS (json_extract(raw_data, '$.actionType')) VIRTUAL,
	`change_log` text GENERATED ALWAYS AS (json_extract(raw_data, '$.changeLog')) VIRTUAL,
	`updated_by` text GENERATED ALWAYS AS (json_extract(raw_data, '$.updatedBy')) VIRTUAL,
	`updated_by_user_id` text GENERATED ALWAYS AS (json_extract(raw_data, '$.updatedByUserID')) VIRTUAL,
	`modifier_email` text GENERATED ALWAYS AS (json_extract(raw_data, '$.modifierEmail')) VIRTUAL,
	`occurred_at` integer,
	`server_day` text,
	`date_text` text NOT NULL GENERATED ALWAYS AS (json_extract(raw_data, '$.date')) VIRTUAL,
	`time_text` text NOT NULL GENERATED ALWAYS AS (json_extract(raw_data, '$.time')) VIRTUAL,
	`tags` text GENERATED ALWAYS AS (json_extract(raw_data, '$.tags')) VIRTUAL,
	`raw` text NOT NULL GENERATED ALWAYS AS (raw_data) VIRTUAL,
	`record_hash` text NOT NULL GENERATED ALWAYS AS (lower(hex(record_hash_bytes))) VIRTUAL,
	`seq` integer PRIMARY KEY NOT NULL,
	`chain_hash` text NOT NULL GENERATED ALWAYS AS (lower(hex(chain_hash_bytes))) VIRTUAL,
	`first_seen_at` integer NOT NULL,
	`sync_run_id` integer,
	`changes` text GENERATED ALWAYS AS (coalesce(json_extract(raw_data, '$.changes'), '{}')) VIRTUAL,
	`raw_data` text NOT NULL,
	`record_hash_bytes` blob NOT NULL,
	`chain_hash_bytes` blob NOT NULL
);--> statement-breakpoint
-- The id's unique index first: a foreign key needs it to find its parent rows.
CREATE UNIQUE INDEX `audit_logs_id_idx` ON `audit_logs` (`id`);--> statement-breakpoint
INSERT INTO `audit_logs` (seq, occurred_at, server_day, first_seen_at, sync_run_id, raw_data, record_hash_bytes,
  chain_hash_bytes)
  SELECT seq, occurred_at, server_day, first_seen_at, sync_run_id, raw_data, record_hash_bytes, chain_hash_bytes
  FROM `audit_logs_0015` ORDER BY seq;--> statement-breakpoint
DROP TABLE `audit_logs_0015`;--> statement-breakpoint
CREATE INDEX `audit_logs_occurred_at_idx` ON `audit_logs` (`occurred_at`);--> statement-breakpoint
CREATE INDEX `audit_logs_server_day_idx` ON `audit_logs` (`server_day`);--> statement-breakpoint
CREATE INDEX `audit_logs_action_type_idx` ON `audit_logs` (`action_type`,`occurred_at`,`name`,`updated_by`,`id`);--> statement-breakpoint
CREATE INDEX `audit_logs_name_idx` ON `audit_logs` (`name`);--> statement-breakpoint
CREATE TRIGGER `audit_logs_fts_after_insert` AFTER INSERT ON `audit_logs` BEGIN
  INSERT INTO audit_logs_fts (rowid, name, change_log, updated_by)
  VALUES (new.seq, new.name, new.change_log, new.updated_by);
END;
--> statement-breakpoint
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
-- rule_diff_summaries was a rowid table plus its primary key's index, which held audit_log_id a second
-- time: WITHOUT ROWID, the key's b-tree is the table (~4.6 bytes a record). Same columns and rows.
CREATE TABLE `rule_diff_summaries_0015` AS SELECT audit_log_id, summary, diff_version FROM `rule_diff_summaries`;--> statement-breakpoint
DROP TABLE `rule_diff_summaries`;--> statement-breakpoint
CREATE TABLE `rule_diff_summaries` (
	`audit_log_id` text PRIMARY KEY NOT NULL,
	`summary` text NOT NULL,
	`diff_version` integer NOT NULL,
	FOREIGN KEY (`audit_log_id`) REFERENCES `audit_logs`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;--> statement-breakpoint
INSERT INTO `rule_diff_summaries` (audit_log_id, summary, diff_version)
  SELECT audit_log_id, summary, diff_version FROM `rule_diff_summaries_0015` ORDER BY audit_log_id;--> statement-breakpoint
DROP TABLE `rule_diff_summaries_0015`;
