CREATE TABLE `control_checks` (
	`id` integer PRIMARY KEY NOT NULL,
	`checked_at` integer NOT NULL,
	`period_start` integer NOT NULL,
	`period_end` integer NOT NULL,
	`findings` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `control_findings` (
	`id` text PRIMARY KEY NOT NULL,
	`control_id` text NOT NULL,
	`kind` text NOT NULL,
	`severity` text NOT NULL,
	`record_id` text,
	`entity` text,
	`action_type` text,
	`occurred_at` integer,
	`actor` text,
	`message` text NOT NULL,
	`first_seen_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `control_findings_control_idx` ON `control_findings` (`control_id`);--> statement-breakpoint
CREATE TABLE `control_outbox` (
	`finding_id` text NOT NULL,
	`sink` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`delivered_at` integer,
	`last_error` text,
	PRIMARY KEY(`finding_id`, `sink`)
);
--> statement-breakpoint
CREATE TABLE `control_tickets` (
	`record_id` text NOT NULL,
	`control_id` text NOT NULL,
	`ticket` text NOT NULL,
	PRIMARY KEY(`record_id`, `control_id`)
);
--> statement-breakpoint
CREATE TABLE `control_waivers` (
	`seq` integer PRIMARY KEY NOT NULL,
	`finding_id` text NOT NULL,
	`action` text NOT NULL,
	`reason` text NOT NULL,
	`by_name` text NOT NULL,
	`expires` text,
	`created_at` integer NOT NULL,
	`hash` text NOT NULL,
	`chain_hash` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `control_waivers_finding_idx` ON `control_waivers` (`finding_id`);