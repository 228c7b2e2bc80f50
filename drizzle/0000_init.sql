CREATE TABLE `action_type_categories` (
	`action_type` text PRIMARY KEY NOT NULL,
	`category` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_log_revisions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`audit_log_id` text NOT NULL,
	`raw` text NOT NULL,
	`record_hash` text NOT NULL,
	`seen_at` integer NOT NULL,
	`sync_run_id` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `audit_log_revisions_id_hash_idx` ON `audit_log_revisions` (`audit_log_id`,`record_hash`);--> statement-breakpoint
CREATE TABLE `audit_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`action_type` text NOT NULL,
	`change_log` text,
	`updated_by` text,
	`updated_by_user_id` text,
	`modifier_email` text,
	`occurred_at` integer,
	`server_day` text,
	`date_text` text NOT NULL,
	`time_text` text NOT NULL,
	`tags` text,
	`changes` text NOT NULL,
	`raw` text NOT NULL,
	`record_hash` text NOT NULL,
	`seq` integer NOT NULL,
	`chain_hash` text NOT NULL,
	`first_seen_at` integer NOT NULL,
	`sync_run_id` integer
);
--> statement-breakpoint
CREATE INDEX `audit_logs_occurred_at_idx` ON `audit_logs` (`occurred_at`);--> statement-breakpoint
CREATE INDEX `audit_logs_server_day_idx` ON `audit_logs` (`server_day`);--> statement-breakpoint
CREATE INDEX `audit_logs_action_type_idx` ON `audit_logs` (`action_type`,`occurred_at`);--> statement-breakpoint
CREATE INDEX `audit_logs_name_idx` ON `audit_logs` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `audit_logs_seq_idx` ON `audit_logs` (`seq`);--> statement-breakpoint
CREATE TABLE `checkpoints` (
	`filter_key` text PRIMARY KEY NOT NULL,
	`latest_id` text NOT NULL,
	`latest_occurred_at` integer,
	`updated_at` integer NOT NULL,
	`sync_run_id` integer
);
--> statement-breakpoint
CREATE TABLE `coverage` (
	`filter_key` text NOT NULL,
	`day` text NOT NULL,
	`server_total` integer NOT NULL,
	`local_count` integer NOT NULL,
	`checked_at` integer NOT NULL,
	`sync_run_id` integer,
	`day_closed` integer DEFAULT 0 NOT NULL,
	`quarantined_count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`filter_key`, `day`)
);
--> statement-breakpoint
CREATE TABLE `leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`pid` integer NOT NULL,
	`acquired_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `quarantine` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`record_id` text,
	`raw` text NOT NULL,
	`raw_hash` text NOT NULL,
	`issues` text NOT NULL,
	`request_path` text,
	`received_at` integer NOT NULL,
	`sync_run_id` integer,
	`server_day` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `quarantine_raw_hash_idx` ON `quarantine` (`raw_hash`);--> statement-breakpoint
CREATE TABLE `rule_changes` (
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
);
--> statement-breakpoint
CREATE INDEX `rule_changes_audit_log_id_idx` ON `rule_changes` (`audit_log_id`);--> statement-breakpoint
CREATE INDEX `rule_changes_rule_id_idx` ON `rule_changes` (`rule_id`);--> statement-breakpoint
CREATE TABLE `rule_diff_summaries` (
	`audit_log_id` text PRIMARY KEY NOT NULL,
	`summary` text NOT NULL,
	`diff_version` integer NOT NULL,
	FOREIGN KEY (`audit_log_id`) REFERENCES `audit_logs`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `sync_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`outcome` text DEFAULT 'running' NOT NULL,
	`filter_key` text NOT NULL,
	`params` text NOT NULL,
	`fetched` integer DEFAULT 0 NOT NULL,
	`inserted` integer DEFAULT 0 NOT NULL,
	`duplicates` integer DEFAULT 0 NOT NULL,
	`mutations` integer DEFAULT 0 NOT NULL,
	`quarantined` integer DEFAULT 0 NOT NULL,
	`warnings` integer DEFAULT 0 NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`throttled` integer DEFAULT 0 NOT NULL,
	`error` text,
	`pid` integer
);
--> statement-breakpoint
CREATE INDEX `sync_runs_started_at_idx` ON `sync_runs` (`started_at`);--> statement-breakpoint
CREATE TABLE `sync_windows` (
	`filter_key` text NOT NULL,
	`start_date` text NOT NULL,
	`end_date` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`next_page` integer DEFAULT 1 NOT NULL,
	`updated_at` integer NOT NULL,
	`sync_run_id` integer,
	PRIMARY KEY(`filter_key`, `start_date`, `end_date`)
);
