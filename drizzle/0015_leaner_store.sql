-- Leaner store (issue 25), after 0011: three more audit_logs columns stop being copies on disk, with their
-- names, places and values kept.
-- - updated_by_user_id and modifier_email are read from raw_data like the others (a string as received;
--   an object e-mail as JSON text, the record's own text without blanks: the same JSON, which is what
--   verify compares). The report reading them per record costs ~7 % more CPU, against ~45 bytes a record.
-- - server_day is read from the date text when that is Date#toDateString()'s form ('Mon Sep 26 2022'),
--   as the writer reads it; the new server_day_override keeps the writer's day wherever the two differ
--   (another form such as 'Monday, September 26, 2022', a date that does not exist, a wrong weekday:
--   '' for none), so each row reads back exactly what was stored. The writer compares as it inserts.
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
	`server_day` text GENERATED ALWAYS AS (nullif(coalesce(server_day_override, CASE WHEN date_text GLOB '[A-Z][a-z][a-z] [A-Z][a-z][a-z] [0-3][0-9] [1-9][0-9][0-9][0-9]' AND instr('JanFebMarAprMayJunJulAugSepOctNovDec', substr(date_text, 5, 3)) % 3 = 1
    THEN substr(date_text, 12, 4) || printf('-%02d-', instr('JanFebMarAprMayJunJulAugSepOctNovDec', substr(date_text, 5, 3)) / 3 + 1) || substr(date_text, 9, 2) END), '')) VIRTUAL,
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
	`chain_hash_bytes` blob NOT NULL,
	`server_day_override` text
);--> statement-breakpoint
-- The id's unique index first: a foreign key needs it to find its parent rows.
CREATE UNIQUE INDEX `audit_logs_id_idx` ON `audit_logs` (`id`);--> statement-breakpoint
INSERT INTO `audit_logs` (seq, occurred_at, server_day_override, first_seen_at, sync_run_id, raw_data,
  record_hash_bytes, chain_hash_bytes)
  SELECT seq, occurred_at,
    CASE WHEN server_day IS (CASE WHEN d GLOB '[A-Z][a-z][a-z] [A-Z][a-z][a-z] [0-3][0-9] [1-9][0-9][0-9][0-9]' AND instr('JanFebMarAprMayJunJulAugSepOctNovDec', substr(d, 5, 3)) % 3 = 1
      THEN substr(d, 12, 4) || printf('-%02d-', instr('JanFebMarAprMayJunJulAugSepOctNovDec', substr(d, 5, 3)) / 3 + 1) || substr(d, 9, 2) END)
      THEN NULL ELSE coalesce(server_day, '') END,
    first_seen_at, sync_run_id, raw_data, record_hash_bytes, chain_hash_bytes
  FROM (SELECT *, json_extract(raw_data, '$.date') AS d FROM `audit_logs_0015`) ORDER BY seq;--> statement-breakpoint
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
