CREATE TABLE `export_cursors` (
	`project` text NOT NULL,
	`name` text NOT NULL,
	`seq` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`project`, `name`)
);
