CREATE TABLE `config_edit_links` (
	`audit_log_id` text PRIMARY KEY NOT NULL,
	`config_key` text NOT NULL,
	`version` integer NOT NULL,
	FOREIGN KEY (`audit_log_id`) REFERENCES `audit_logs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `config_edit_links_version_idx` ON `config_edit_links` (`config_key`,`version`);--> statement-breakpoint
CREATE TABLE `config_version_changes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`config_key` text NOT NULL,
	`version` integer NOT NULL,
	`previous_version` integer,
	`field` text NOT NULL,
	`path` text,
	`change` text NOT NULL,
	`old_value` text,
	`new_value` text
);
--> statement-breakpoint
CREATE INDEX `config_version_changes_idx` ON `config_version_changes` (`config_key`,`version`);--> statement-breakpoint
CREATE TABLE `config_version_revisions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`config_key` text NOT NULL,
	`version` integer NOT NULL,
	`raw` text NOT NULL,
	`record_hash` text NOT NULL,
	`entity_seq` integer NOT NULL,
	`entity_chain_hash` text NOT NULL,
	`seen_at` integer NOT NULL,
	`sync_run_id` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `config_version_revisions_idx` ON `config_version_revisions` (`config_key`,`version`,`record_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `config_version_revisions_entity_seq_idx` ON `config_version_revisions` (`entity_seq`);--> statement-breakpoint
CREATE TABLE `config_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`config_key` text NOT NULL,
	`config_id` text NOT NULL,
	`version` integer NOT NULL,
	`last_modified_time` integer NOT NULL,
	`last_modifier_id` text,
	`last_modifier_name` text,
	`raw` text NOT NULL,
	`record_hash` text NOT NULL,
	`entity_seq` integer NOT NULL,
	`entity_chain_hash` text NOT NULL,
	`first_seen_at` integer NOT NULL,
	`sync_run_id` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `config_versions_key_version_idx` ON `config_versions` (`config_key`,`version`);--> statement-breakpoint
CREATE INDEX `config_versions_time_idx` ON `config_versions` (`config_key`,`last_modified_time`);--> statement-breakpoint
CREATE UNIQUE INDEX `config_versions_entity_seq_idx` ON `config_versions` (`entity_seq`);--> statement-breakpoint
CREATE TABLE `entity_fetches` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`entity_key` text NOT NULL,
	`outcome` text NOT NULL,
	`items` integer DEFAULT 0 NOT NULL,
	`invalid` integer DEFAULT 0 NOT NULL,
	`audit_seq` integer NOT NULL,
	`fetched_at` integer NOT NULL,
	`sync_run_id` integer
);
--> statement-breakpoint
CREATE INDEX `entity_fetches_key_idx` ON `entity_fetches` (`kind`,`entity_key`,`audit_seq`);--> statement-breakpoint
CREATE TABLE `experiment_snapshots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`layer_id` text NOT NULL,
	`experiment_id` text NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`taken_at` integer NOT NULL,
	`raw` text NOT NULL,
	`record_hash` text NOT NULL,
	`entity_seq` integer NOT NULL,
	`entity_chain_hash` text NOT NULL,
	`sync_run_id` integer
);
--> statement-breakpoint
CREATE INDEX `experiment_snapshots_experiment_idx` ON `experiment_snapshots` (`experiment_id`,`taken_at`);--> statement-breakpoint
CREATE INDEX `experiment_snapshots_name_idx` ON `experiment_snapshots` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `experiment_snapshots_entity_seq_idx` ON `experiment_snapshots` (`entity_seq`);--> statement-breakpoint
CREATE TABLE `metric_snapshots` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_name` text NOT NULL,
	`metric_id` text NOT NULL,
	`taken_at` integer NOT NULL,
	`raw` text NOT NULL,
	`record_hash` text NOT NULL,
	`entity_seq` integer NOT NULL,
	`entity_chain_hash` text NOT NULL,
	`sync_run_id` integer
);
--> statement-breakpoint
CREATE INDEX `metric_snapshots_event_idx` ON `metric_snapshots` (`event_name`,`metric_id`,`taken_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `metric_snapshots_entity_seq_idx` ON `metric_snapshots` (`entity_seq`);--> statement-breakpoint
-- Views over entity history (written by hand below drizzle-kit's tables; README "Entity history").
-- Every field change of every stored config version, with the audit record that produced it (NULL:
-- none did) and who made the version.
CREATE VIEW `config_version_history` AS
SELECT v.config_key, v.version, v.last_modified_time, v.last_modifier_id, v.last_modifier_name,
       l.audit_log_id, a.action_type, a.updated_by, c.field, c.path, c.change, c.old_value, c.new_value
FROM config_versions v
LEFT JOIN config_edit_links l ON l.config_key = v.config_key AND l.version = v.version
LEFT JOIN audit_logs a ON a.id = l.audit_log_id
LEFT JOIN config_version_changes c ON c.config_key = v.config_key AND c.version = v.version;
--> statement-breakpoint
-- Each experiment as its layer last listed it.
CREATE VIEW `experiment_current_states` AS
SELECT s.experiment_id, s.name, s.layer_id, s.status, s.taken_at,
       json_extract(s.raw, '$.startTime') AS start_time, json_extract(s.raw, '$.endTime') AS end_time,
       json_extract(s.raw, '$.decisionReason') AS decision_reason,
       json_extract(s.raw, '$.launchedGroupID') AS launched_group_id
FROM experiment_snapshots s
WHERE s.entity_seq = (SELECT max(s2.entity_seq) FROM experiment_snapshots s2 WHERE s2.experiment_id = s.experiment_id);
