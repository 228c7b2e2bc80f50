-- The category index covers what the report reads of a category's records besides the CSV columns
-- (the unreviewed-change window, the per-entity summaries): bench/report.ts.
DROP INDEX "audit_logs_action_type_idx";--> statement-breakpoint
CREATE INDEX "audit_logs_action_type_idx" ON "audit_logs" USING btree ("action_type","occurred_at","seq","name","updated_by","id");
