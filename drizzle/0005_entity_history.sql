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
CREATE UNIQUE INDEX `metric_snapshots_entity_seq_idx` ON `metric_snapshots` (`entity_seq`);