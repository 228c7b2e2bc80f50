ALTER TABLE `coverage` ADD `quarantined_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `quarantine` ADD `server_day` text;