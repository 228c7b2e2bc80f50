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
--> statement-breakpoint
-- rule_changes kept whole rules twice: an added rule's new_value and a removed rule's old_value are the
-- JSON of changes.rules.new[new_position - 1] / .old[old_position - 1] of the record's raw text (~23 bytes a
-- record). Its rows move to rule_change_rows, where such a value is NULL when SQL reads the same text from
-- the record (the record's own JSON without blanks; kept otherwise, e.g. a number written 1.0; and kept
-- for a rule that is not an object or array, whose text does not start with { or [: json_extract gives a
-- scalar back as a number, not as its text), and
-- rule_changes becomes a view giving every column back as stored before, same ids and order. Writes go
-- through it: its INSTEAD OF triggers insert and delete rule_change_rows' rows.
CREATE TABLE `rule_change_rows` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`audit_log_id` text NOT NULL,
	`rule_id` text NOT NULL,
	`rule_name` text,
	`change` text NOT NULL,
	`field` text,
	`old_value` text,
	`new_value` text,
	`old_position` integer,
	`new_position` integer,
	FOREIGN KEY (`audit_log_id`) REFERENCES `audit_logs`(`id`) ON UPDATE no action ON DELETE no action
);--> statement-breakpoint
INSERT INTO `rule_change_rows` (id, audit_log_id, rule_id, rule_name, change, field, old_value, new_value,
  old_position, new_position)
  SELECT r.id, r.audit_log_id, r.rule_id, r.rule_name, r.change, r.field,
    CASE WHEN r.change = 'removed' AND substr(r.old_value, 1, 1) IN ('{', '[') AND r.old_value = json_extract(a.raw_data,
      '$.changes.rules.old[' || CAST(r.old_position - 1 AS INTEGER) || ']') THEN NULL ELSE r.old_value END,
    CASE WHEN r.change = 'added' AND substr(r.new_value, 1, 1) IN ('{', '[') AND r.new_value = json_extract(a.raw_data,
      '$.changes.rules.new[' || CAST(r.new_position - 1 AS INTEGER) || ']') THEN NULL ELSE r.new_value END,
    r.old_position, r.new_position
  FROM `rule_changes` r LEFT JOIN `audit_logs` a ON a.id = r.audit_log_id ORDER BY r.id;--> statement-breakpoint
DROP TABLE `rule_changes`;--> statement-breakpoint
CREATE INDEX `rule_changes_audit_log_id_idx` ON `rule_change_rows` (`audit_log_id`);--> statement-breakpoint
CREATE VIEW `rule_changes` AS
SELECT r.id, r.audit_log_id, r.rule_id, r.rule_name, r.change, r.field,
       CASE WHEN r.old_value IS NULL AND r.change = 'removed' THEN (SELECT json_extract(a.raw_data,
         '$.changes.rules.old[' || CAST(r.old_position - 1 AS INTEGER) || ']') FROM audit_logs a
         WHERE a.id = r.audit_log_id) ELSE r.old_value END AS old_value,
       CASE WHEN r.new_value IS NULL AND r.change = 'added' THEN (SELECT json_extract(a.raw_data,
         '$.changes.rules.new[' || CAST(r.new_position - 1 AS INTEGER) || ']') FROM audit_logs a
         WHERE a.id = r.audit_log_id) ELSE r.new_value END AS new_value,
       r.old_position, r.new_position
FROM rule_change_rows r;--> statement-breakpoint
CREATE TRIGGER `rule_changes_instead_of_insert` INSTEAD OF INSERT ON `rule_changes` BEGIN
  INSERT INTO rule_change_rows (id, audit_log_id, rule_id, rule_name, change, field, old_value, new_value,
    old_position, new_position)
  VALUES (new.id, new.audit_log_id, new.rule_id, new.rule_name, new.change, new.field,
    CASE WHEN new.change = 'removed' AND substr(new.old_value, 1, 1) IN ('{', '[') AND new.old_value = (
      SELECT json_extract(a.raw_data, '$.changes.rules.old[' || CAST(new.old_position - 1 AS INTEGER) || ']')
      FROM audit_logs a WHERE a.id = new.audit_log_id) THEN NULL ELSE new.old_value END,
    CASE WHEN new.change = 'added' AND substr(new.new_value, 1, 1) IN ('{', '[') AND new.new_value = (
      SELECT json_extract(a.raw_data, '$.changes.rules.new[' || CAST(new.new_position - 1 AS INTEGER) || ']')
      FROM audit_logs a WHERE a.id = new.audit_log_id) THEN NULL ELSE new.new_value END,
    new.old_position, new.new_position);
END;
--> statement-breakpoint
CREATE TRIGGER `rule_changes_instead_of_delete` INSTEAD OF DELETE ON `rule_changes` BEGIN
  DELETE FROM rule_change_rows WHERE id = old.id;
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
