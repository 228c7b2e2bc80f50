-- control_findings by record (both engines): `flagtrail export` reads a batch's findings by its records;
-- without this index each batch scanned every finding (300k store with 25k findings: 51-63 -> 3-8 ms a
-- batch, the whole export's CPU 41 -> 27 s).
CREATE INDEX IF NOT EXISTS `control_findings_record_idx` ON `control_findings` (`record_id`);
