-- SQLite's spellings the report's queries use, so that one query text runs on both engines and the
-- compliance Markdown prints it once (src/store/reportQueries.ts). Custom migration:
-- npx drizzle-kit generate --custom --config drizzle.pg.config.ts.
--
-- Byte-order text sorting, as SQLite's built-in BINARY collation: `ORDER BY name COLLATE "binary"`.
CREATE COLLATION "binary" FROM "C";
--> statement-breakpoint
-- SQLite's json_each over a JSON array held in text (the report's list parameters): one row per
-- element, its index and its value as text (an object element as its JSON text). The built-in
-- json_each(json) is untouched: this one takes text. SQL-language and IMMUTABLE, so the planner inlines
-- it as json_array_elements_text (a type filter plans as before: the action-type index).
CREATE FUNCTION "json_each"(j text) RETURNS TABLE("key" integer, "value" text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (e.n - 1)::integer, e.value FROM json_array_elements_text(j::json) WITH ORDINALITY AS e(value, n)
$$;
--> statement-breakpoint
-- The same over the array at a path of the form '$.key' or '$.key.key'; no rows where that is not an array.
CREATE FUNCTION "json_each"(j text, path text) RETURNS TABLE("key" integer, "value" text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (e.n - 1)::integer, e.value
  FROM json_array_elements_text(
    CASE WHEN json_typeof(j::json #> string_to_array(substr(path, 3), '.')) = 'array'
         THEN j::json #> string_to_array(substr(path, 3), '.') ELSE '[]'::json END) WITH ORDINALITY AS e(value, n)
$$;
--> statement-breakpoint
-- SQLite's json_extract for a path of the form '$.key' or '$.key.key', as text (NULL where the path is
-- missing or null); a number compared with one is cast: CAST(json_extract(v, '$.start') AS BIGINT).
CREATE FUNCTION "json_extract"(j text, path text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT j::json #>> string_to_array(substr(path, 3), '.')
$$;
