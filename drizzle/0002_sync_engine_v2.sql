ALTER TABLE `quarantine` ADD `day_min` text;--> statement-breakpoint
ALTER TABLE `quarantine` ADD `day_max` text;--> statement-breakpoint
ALTER TABLE `sync_runs` ADD `retries` integer DEFAULT 0 NOT NULL;