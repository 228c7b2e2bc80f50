CREATE TABLE `entity_backlog` (
	`kind` text NOT NULL,
	`entity_key` text NOT NULL,
	`newest_seq` integer NOT NULL,
	`pending_since` integer NOT NULL,
	`sync_run_id` integer,
	PRIMARY KEY(`kind`, `entity_key`)
);
