CREATE TABLE `listed_days` (
	`audit_log_id` text PRIMARY KEY NOT NULL,
	`day` text NOT NULL,
	FOREIGN KEY (`audit_log_id`) REFERENCES `audit_logs`(`id`) ON UPDATE no action ON DELETE no action
);
