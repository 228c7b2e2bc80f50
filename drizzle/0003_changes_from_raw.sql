-- `changes` was stored twice (its column and inside `raw`). It becomes a virtual generated column read
-- from `raw`, so SQL keeps the documented column and the store keeps one copy. Hand-written: drizzle-kit
-- would recreate the table, which the views and the full-text triggers over audit_logs do not survive.
ALTER TABLE `audit_logs` DROP COLUMN `changes`;--> statement-breakpoint
ALTER TABLE `audit_logs` ADD `changes` text GENERATED ALWAYS AS (coalesce(json_extract(raw, '$.changes'), '{}')) VIRTUAL;
