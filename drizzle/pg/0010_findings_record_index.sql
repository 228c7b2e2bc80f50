-- control_findings by record: `flagtrail export` reads a batch's findings by its records (see the SQLite
-- migration 0013); without this index each batch scanned every finding.
CREATE INDEX IF NOT EXISTS "control_findings_record_idx" ON "control_findings" USING btree ("record_id");
