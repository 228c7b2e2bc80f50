// What the entity part of a sync has to read: configs, layers and events due for a read.
import { VERSIONED_CONFIG_EDITS } from "../api/entityActions.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, queriesOf, type SQL, sql } from "./query.ts";

/** Reads that caught up: not a 403 (says nothing; the next run tries again), but a 404 (gone until named). */
function caughtUp(kind: string): SQL {
  return sql`SELECT coalesce(max(f.audit_seq), 0) FROM entity_fetches f
    WHERE f.kind = ${kind} AND f.entity_key = a.name AND f.outcome IN ('ok', 'not_found')`;
}

/** An entity due for a read, with the seq of the newest record naming it (the budget reads the newest first). */
type DueEntity = { name: string; newest: number };

/** Config names with a versioned config edit stored after their last read (none: no request), most recently edited first. */
export async function configsDueForVersions(store: AnyStore): Promise<DueEntity[]> {
  return (await queriesOf(store)).all<DueEntity>(
    sql`SELECT a.name, max(a.seq) AS newest FROM audit_logs a
      WHERE a.action_type IN ${inList([...VERSIONED_CONFIG_EDITS])}
      GROUP BY a.name HAVING max(a.seq) > (${caughtUp("config_versions")}) ORDER BY max(a.seq) DESC, a.name`,
  );
}

/** The version numbers stored of one config, as the keys its versions read goes by. */
export async function storedVersionKeys(store: AnyStore, configKey: string): Promise<Set<string>> {
  const rows = await (await queriesOf(store)).all<{ version: number }>(
    sql`SELECT version FROM config_versions WHERE config_key = ${configKey}`,
  );
  return new Set(rows.map((row) => String(row.version)));
}

/**
 * Layers `layerActions` name whose list may have changed since their last read, most recent first. An
 * experiment record (`experimentActions`) names no layer: it counts for a layer that listed its experiment,
 * or for every layer when the experiment is new or moved (`moveActions`); a nightly run reads only those.
 */
export async function layersDueForExperiments(
  store: AnyStore,
  layerActions: readonly string[],
  experimentActions: readonly string[],
  moveActions: readonly string[],
): Promise<DueEntity[]> {
  const experimentRecords = inList([...experimentActions, ...moveActions]);
  return (await queriesOf(store)).all<DueEntity>(
    sql`WITH layers AS (
        SELECT a.name, max(a.seq) AS named, (${caughtUp("layer_experiments")}) AS caught_up
        FROM audit_logs a WHERE a.action_type IN ${inList(layerActions)} GROUP BY a.name),
      changed AS (
        SELECT c.name, c.seq, c.action_type,
          (SELECT min(f.seq) FROM audit_logs f WHERE f.name = c.name AND f.action_type IN ${experimentRecords}) AS first_seq
        FROM audit_logs c
        WHERE c.action_type IN ${experimentRecords} AND c.seq > (SELECT coalesce(min(caught_up), 0) FROM layers)),
      touched AS (
        SELECT l.name, max(c.seq) AS newest FROM layers l JOIN changed c ON c.seq > l.caught_up
        WHERE c.first_seq > l.caught_up OR c.action_type IN ${inList(moveActions)}
          OR EXISTS (SELECT 1 FROM experiment_snapshots s
            WHERE s.layer_id = l.name AND (s.name = c.name OR s.experiment_id = c.name))
        GROUP BY l.name),
      due AS (
        SELECT l.name, CASE WHEN t.newest > l.named THEN t.newest ELSE l.named END AS newest, l.caught_up
        FROM layers l LEFT JOIN touched t ON t.name = l.name)
      SELECT name, newest FROM due WHERE newest > caught_up ORDER BY newest DESC, name`,
  );
}

/**
 * What names events to read metrics of: events read before, and raw metrics whose lineage names events (read
 * in src/sync/metricEvents.ts: PostgreSQL's json_each(text, path) gives no member types, reads arrays only).
 */
export async function metricEventSources(
  store: AnyStore,
): Promise<{ fetched: string[]; lineageRaw: string[] }> {
  const q = await queriesOf(store);
  const fetched = await q.all<{ name: string }>(
    sql`SELECT entity_key AS name FROM entity_fetches WHERE kind = 'event_metrics' AND outcome = 'ok'`,
  );
  const snapshots = await q.all<{ raw: string }>(
    sql`SELECT m.raw FROM metric_snapshots m WHERE json_extract(m.raw, '$.lineage.events') IS NOT NULL`,
  );
  return { fetched: fetched.map((row) => row.name), lineageRaw: snapshots.map((row) => row.raw) };
}
