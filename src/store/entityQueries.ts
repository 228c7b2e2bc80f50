// What the entity part of a sync has to read: the dynamic configs with config edits stored since their
// versions were last read, the layers named by records since their experiments were last read, and the
// events whose metrics were read before (their lineage is kept up to date).
import { VERSIONED_CONFIG_EDITS } from "../api/entityActions.ts";
import { type Store, sqliteOf } from "./connection.ts";

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/**
 * Reads that caught up: a 403 read says nothing about the entity, so it does not count (the next run
 * tries again); a 404 does (the config is gone until a new edit names it again).
 */
const CAUGHT_UP = `SELECT coalesce(max(f.audit_seq), 0) FROM entity_fetches f
  WHERE f.kind = ? AND f.entity_key = a.name AND f.outcome IN ('ok', 'not_found')`;

/** Config names with a versioned config edit stored after their last read (none: no request). */
export function configsDueForVersions(store: Store): string[] {
  const types = [...VERSIONED_CONFIG_EDITS];
  return sqliteOf(store)
    .prepare(
      `SELECT a.name FROM audit_logs a WHERE a.action_type IN (${placeholders(types.length)})
       GROUP BY a.name HAVING max(a.seq) > (${CAUGHT_UP}) ORDER BY min(a.seq)`,
    )
    .pluck()
    .all(...types, "config_versions") as string[];
}

/**
 * Layers to read: every layer a record names (by `layerActions`), when any record of those layers or
 * of an experiment state change came in after the layer's last read (an experiment record names the
 * experiment, not its layer, so any of them may have moved one).
 */
export function layersDueForExperiments(
  store: Store,
  layerActions: readonly string[],
  experimentActions: readonly string[],
): string[] {
  const sqlite = sqliteOf(store);
  const layers = sqlite
    .prepare(
      `SELECT a.name, max(a.seq) AS newest, (${CAUGHT_UP}) AS caught_up FROM audit_logs a
       WHERE a.action_type IN (${placeholders(layerActions.length)}) GROUP BY a.name ORDER BY min(a.seq)`,
    )
    .all("layer_experiments", ...layerActions) as { name: string; newest: number; caught_up: number }[];
  if (layers.length === 0) return [];
  const newestMove = (sqlite
    .prepare(
      `SELECT coalesce(max(seq), 0) FROM audit_logs WHERE action_type IN (${placeholders(experimentActions.length)})`,
    )
    .pluck()
    .get(...experimentActions) ?? 0) as number;
  return layers.filter((l) => Math.max(l.newest, newestMove) > l.caught_up).map((l) => l.name);
}

/**
 * Events to read metrics of: `named`, every event read before, and every event the stored metrics'
 * lineage names (lineage is followed), each once.
 */
export function eventsDueForMetrics(store: Store, named: readonly string[]): string[] {
  const known = sqliteOf(store)
    .prepare(
      `SELECT entity_key FROM entity_fetches WHERE kind = 'event_metrics' AND outcome = 'ok'
       UNION
       SELECT e.value FROM metric_snapshots m, json_each(m.raw, '$.lineage.events') e WHERE e.type = 'text'
       ORDER BY 1`,
    )
    .pluck()
    .all() as string[];
  return [...new Set([...named, ...known])];
}
