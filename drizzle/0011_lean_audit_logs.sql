-- Leaner store (issue 25): audit_logs kept every record about twice, the documented columns being copies
-- of fields of `raw`. Now one copy stays on disk and every documented column keeps its name, place and
-- value, as a virtual generated column where it repeated `raw` (as `changes` does since 0003):
-- - `raw_data` holds the record's text as received; `raw` reads it under its documented name. Text, not
--   SQLite's binary JSON (JSONB, ~80 bytes a record smaller): a JSONB column makes every column read from
--   it fail ("malformed JSON") in SQLite before 3.45, such as Debian 12's sqlite3 and Python's sqlite3
--   there, and the store is meant to be read with any SQLite tool.
-- - id, name, action_type, change_log, updated_by, date_text, time_text and tags are read from it;
--   record_hash and chain_hash are lower(hex()) of 32-byte BLOBs. updated_by_user_id and modifier_email
--   stay stored: the report reads them for every record of its period (by person, the CSVs), and read
--   from the record its CPU grew by ~7 % (one month of a 300k-record store, same files).
-- - seq is the rowid (INTEGER PRIMARY KEY): no separate unique index. id keeps its uniqueness and the
--   foreign keys of the tables referencing it by a unique index on the generated column.
-- - The full-text index no longer stores per-column token counts (columnsize=0): bm25 reads them from the
--   content table when asked. Searches, phrases included, are unchanged.
-- Indexes on virtual columns store the values in the index only. SQLite only: PostgreSQL keeps its
-- columns (no virtual columns before 18). A stored column cannot become a generated one in place, so the
-- table is made again (SQLite's documented procedure), its rows copied aside and back in seq order.
-- Foreign keys are deferred for this transaction: the rows copied back satisfy them again before the
-- commit. The views referencing audit_logs are resolved by name when used and stay as they are.
-- Hand-written (drizzle-kit generate --custom).
PRAGMA defer_foreign_keys = ON;--> statement-breakpoint
DROP TRIGGER IF EXISTS `audit_logs_fts_after_insert`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `audit_logs_fts_after_delete`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `audit_logs_fts_after_update`;--> statement-breakpoint
DROP TABLE `audit_logs_fts`;--> statement-breakpoint
CREATE TABLE `audit_logs_0011` AS
  SELECT seq, updated_by_user_id, modifier_email, occurred_at, server_day, first_seen_at, sync_run_id, raw,
         record_hash, chain_hash
  FROM audit_logs;--> statement-breakpoint
DROP TABLE `audit_logs`;--> statement-breakpoint
CREATE TABLE `audit_logs` (
	`id` text NOT NULL GENERATED ALWAYS AS (json_extract(raw_data, '$.id')) VIRTUAL,
	`name` text NOT NULL GENERATED ALWAYS AS (json_extract(raw_data, '$.name')) VIRTUAL,
	`action_type` text NOT NULL GENERATED ALWAYS AS (json_extract(raw_data, '$.actionType')) VIRTUAL,
	`change_log` text GENERATED ALWAYS AS (json_extract(raw_data, '$.changeLog')) VIRTUAL,
	`updated_by` text GENERATED ALWAYS AS (json_extract(raw_data, '$.updatedBy')) VIRTUAL,
	`updated_by_user_id` text,
	`modifier_email` text,
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
-- The id's unique index first: a foreign key needs it to find its parent rows (a "foreign key mismatch"
-- otherwise).
CREATE UNIQUE INDEX `audit_logs_id_idx` ON `audit_logs` (`id`);--> statement-breakpoint
INSERT INTO `audit_logs` (seq, updated_by_user_id, modifier_email, occurred_at, server_day, first_seen_at,
  sync_run_id, raw_data, record_hash_bytes, chain_hash_bytes)
  SELECT seq, updated_by_user_id, modifier_email, occurred_at, server_day, first_seen_at, sync_run_id,
         raw,
         unhex(record_hash), unhex(chain_hash)
  FROM `audit_logs_0011` ORDER BY seq;--> statement-breakpoint
DROP TABLE `audit_logs_0011`;--> statement-breakpoint
CREATE INDEX `audit_logs_occurred_at_idx` ON `audit_logs` (`occurred_at`);--> statement-breakpoint
CREATE INDEX `audit_logs_server_day_idx` ON `audit_logs` (`server_day`);--> statement-breakpoint
CREATE INDEX `audit_logs_action_type_idx` ON `audit_logs` (`action_type`,`occurred_at`,`seq`,`name`,`updated_by`,`id`);--> statement-breakpoint
CREATE INDEX `audit_logs_name_idx` ON `audit_logs` (`name`);--> statement-breakpoint
CREATE VIRTUAL TABLE `audit_logs_fts` USING fts5(
  name, change_log, updated_by,
  content = 'audit_logs', content_rowid = 'seq', tokenize = 'unicode61 remove_diacritics 2', columnsize = 0
);--> statement-breakpoint
INSERT INTO audit_logs_fts (audit_logs_fts) VALUES ('rebuild');--> statement-breakpoint
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
