// What the entity part of a sync has to read, on a PostgreSQL store (src/store/entityQueries.ts on
// SQLite, same rules and the same lists in the same order).
import { VERSIONED_CONFIG_EDITS } from "../../api/entityActions.ts";
import { type PgStore, pgConnectionOf } from "./connection.ts";
import { describePgError } from "./errors.ts";

/** Reads that caught up ($1: the fetch kind): a 403 does not count, a 404 does (as on SQLite). */
const CAUGHT_UP = `SELECT coalesce(max(f.audit_seq), 0) FROM entity_fetches f
  WHERE f.kind = $1 AND f.entity_key = a.name AND f.outcome IN ('ok', 'not_found')`;

async function column(store: PgStore, text: string, values: unknown[]): Promise<string[]> {
  const { pool, url } = pgConnectionOf(store);
  const result = await pool.query<{ name: string }>(text, values).catch((error: unknown) => {
    throw describePgError(error, url);
  });
  return result.rows.map((r) => r.name);
}

/** Config names with a versioned config edit stored after their last read (none: no request). */
export function pgConfigsDueForVersions(store: PgStore): Promise<string[]> {
  return column(
    store,
    `SELECT a.name FROM audit_logs a WHERE a.action_type = ANY($2::text[])
     GROUP BY a.name HAVING max(a.seq) > (${CAUGHT_UP}) ORDER BY min(a.seq)`,
    ["config_versions", [...VERSIONED_CONFIG_EDITS]],
  );
}

/**
 * Layers to read: every layer a record names (by `layerActions`), when any record of those layers or of
 * an experiment state change came in after the layer's last read. One statement: the newest experiment
 * move is read with the layers.
 */
export function pgLayersDueForExperiments(
  store: PgStore,
  layerActions: readonly string[],
  experimentActions: readonly string[],
): Promise<string[]> {
  return column(
    store,
    `WITH moved AS (SELECT coalesce(max(seq), 0) AS newest FROM audit_logs WHERE action_type = ANY($3::text[])),
     layers AS (SELECT a.name, max(a.seq) AS newest, (${CAUGHT_UP}) AS caught_up, min(a.seq) AS first
       FROM audit_logs a WHERE a.action_type = ANY($2::text[]) GROUP BY a.name)
     SELECT l.name FROM layers l, moved m WHERE greatest(l.newest, m.newest) > l.caught_up ORDER BY l.first`,
    ["layer_experiments", [...layerActions], [...experimentActions]],
  );
}

/**
 * The text members of each metric's lineage.events, as SQLite's json_each(raw, '$.lineage.events')
 * gives them: an array's elements, an object's values, a lone string itself.
 */
const LINEAGE_EVENTS = `SELECT e.value #>> '{}' FROM metric_snapshots m
  CROSS JOIN LATERAL (SELECT m.raw::json #> '{lineage,events}' AS v) l
  CROSS JOIN LATERAL (
    SELECT value FROM json_array_elements(CASE json_typeof(l.v) WHEN 'array' THEN l.v ELSE '[]' END)
    UNION ALL SELECT value FROM json_each(CASE json_typeof(l.v) WHEN 'object' THEN l.v ELSE '{}' END)
    UNION ALL SELECT l.v WHERE json_typeof(l.v) = 'string'
  ) e
  WHERE json_typeof(e.value) = 'string'`;

/**
 * Events to read metrics of: `named`, every event read before, and every event the stored metrics'
 * lineage names, each once (byte order, as SQLite sorts text).
 */
export async function pgEventsDueForMetrics(store: PgStore, named: readonly string[]): Promise<string[]> {
  const known = await column(
    store,
    `SELECT name FROM (
       SELECT entity_key AS name FROM entity_fetches WHERE kind = 'event_metrics' AND outcome = 'ok'
       UNION ${LINEAGE_EVENTS}
     ) known ORDER BY name COLLATE "C"`,
    [],
  );
  return [...new Set([...named, ...known])];
}
