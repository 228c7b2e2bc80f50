-- Views for the compliance questions and full-text search: drizzle-kit cannot generate these, so they
-- live in this custom migration (npx drizzle-kit generate --custom --config drizzle.pg.config.ts).
-- The views have the columns, in the order, of drizzle/0001_views_fts.sql on SQLite (a documented
-- interface, README "Views": add columns at the end, never rename).
CREATE VIEW "experiment_state_changes" AS
SELECT a.id, a.seq, a.occurred_at, a.server_day, a.date_text, a.time_text, a.action_type, c.category,
       a.name, a.change_log, a.updated_by, a.updated_by_user_id, a.modifier_email, a.tags,
       s.summary AS rule_diff_summary
FROM action_type_categories c
JOIN audit_logs a ON a.action_type = c.action_type
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category = 'experiment_state_change';
--> statement-breakpoint
CREATE VIEW "config_edits" AS
SELECT a.id, a.seq, a.occurred_at, a.server_day, a.date_text, a.time_text, a.action_type, c.category,
       a.name, a.change_log, a.updated_by, a.updated_by_user_id, a.modifier_email, a.tags,
       s.summary AS rule_diff_summary
FROM action_type_categories c
JOIN audit_logs a ON a.action_type = c.action_type
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
WHERE c.category = 'config_edit';
--> statement-breakpoint
-- The searchable text of a record, written once for the index and the view below (an index is used only
-- by a query with the same expression). Config 'simple': lower-cased words, no stemming, like FTS5's
-- unicode61 on SQLite. Weights name a field in a query, as FTS5 columns do: A name, B change log,
-- C updater ('jane:C' ≈ 'updated_by:jane').
CREATE FUNCTION "audit_logs_document"(name text, change_log text, updated_by text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A')
      || setweight(to_tsvector('simple'::regconfig, coalesce(change_log, '')), 'B')
      || setweight(to_tsvector('simple'::regconfig, coalesce(updated_by, '')), 'C')
$$;
--> statement-breakpoint
-- An expression index rather than a stored column: audit_logs keeps SQLite's columns, and nothing has to
-- keep a second copy current.
CREATE INDEX "audit_logs_fts_idx" ON "audit_logs" USING gin (audit_logs_document(name, change_log, updated_by));
--> statement-breakpoint
-- Named and keyed as on SQLite (rowid = audit_logs.seq), so a search joins the same way:
--   SELECT a.id FROM audit_logs_fts f JOIN audit_logs a ON a.seq = f.rowid
--   WHERE f.document @@ websearch_to_tsquery('simple', 'holdout')
CREATE VIEW "audit_logs_fts" AS
SELECT seq AS rowid, audit_logs_document(name, change_log, updated_by) AS document FROM audit_logs;
