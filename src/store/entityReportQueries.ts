// The report's reads of entity history, part of QUERIES (reportQueries.ts, which says what the parameters are).
import { VERSIONED_CONFIG_EDITS } from "../api/entityActions.ts";
import type { Nullable, RecordRow } from "./reportQueries/rows.ts";
import { TYPES as ANY_TYPES, scoped } from "./reportQueries/scope.ts";

/** SQL list literal of the config edits that store a version (printed in the queries, so they re-run alone). */
const VERSIONED = `(${VERSIONED_CONFIG_EDITS.map((t) => `'${t}'`).join(", ")})`;
const TYPES = scoped("a", ANY_TYPES);

/** The status each experiment state change leaves an experiment in (others say nothing about it). */
const IMPLIED_STATUS = `implied(action_type, status) AS (VALUES
  ('experiment_create', 'setup'), ('schedule_experiment_start', 'setup'),
  ('experiment_start', 'active'), ('experiment_restart', 'active'),
  ('experiment_pause_assignment', 'assignment_stopped'), ('experiment_decision_make', 'decision_made'),
  ('experiment_abandon', 'abandoned'), ('experiment_stopped', 'experiment_stopped'),
  ('archive_experiment', 'archived'))`;

/** Each experiment's newest snapshot: its current state as the last read saw it. */
const CURRENT = `current_states AS (
  SELECT s.* FROM experiment_snapshots s
  WHERE s.entity_seq = (SELECT max(s2.entity_seq) FROM experiment_snapshots s2 WHERE s2.experiment_id = s.experiment_id))`;

export const ENTITY_REPORT_QUERIES = {
  // Config edits of the period whose record has no rule change, with what their version changed.
  configEditVersionChanges: `SELECT a.occurred_at, a.id, a.name, a.action_type, a.updated_by, l.version,
       c.field, c.path, c.change, c.old_value, c.new_value
FROM audit_logs a
JOIN config_edit_links l ON l.audit_log_id = a.id
LEFT JOIN config_version_changes c ON c.config_key = l.config_key AND c.version = l.version
WHERE a.occurred_at >= @start AND a.occurred_at < @end AND ${TYPES}
  AND json_extract(a.changes, '$.rules') IS NULL
ORDER BY a.occurred_at, a.seq, c.id NULLS FIRST`,

  // Versions of the period that no audit record produced: a change the audit log does not show.
  versionsWithoutRecord: `SELECT v.config_key, v.version, v.last_modified_time, v.last_modifier_name,
       v.last_modifier_id, v.first_seen_at
FROM config_versions v
WHERE v.last_modified_time >= @start AND v.last_modified_time < @end
  AND NOT EXISTS (SELECT 1 FROM config_edit_links l WHERE l.config_key = v.config_key AND l.version = v.version)
ORDER BY v.last_modified_time, v.config_key COLLATE "binary", v.version`,

  // Config edits of the period with no version, among those whose config was read after them.
  editsWithoutVersion: `SELECT a.occurred_at, a.id, a.name, a.action_type, a.updated_by, f.outcome AS last_read,
       f.fetched_at AS read_at
FROM audit_logs a
JOIN entity_fetches f ON f.id = (SELECT max(f2.id) FROM entity_fetches f2
  WHERE f2.kind = 'config_versions' AND f2.entity_key = a.name AND f2.outcome <> 'forbidden')
WHERE a.occurred_at >= @start AND a.occurred_at < @end AND ${TYPES}
  AND a.action_type IN ${VERSIONED} AND f.audit_seq >= a.seq
  AND NOT EXISTS (SELECT 1 FROM config_edit_links l WHERE l.audit_log_id = a.id)
ORDER BY a.occurred_at, a.seq`,

  // Experiments whose current status is not the one their last state change in the audit log left
  // (or that are past setup with no state change at all). Current state: not limited to the period.
  experimentContradictions: `WITH ${IMPLIED_STATUS},
${CURRENT},
timeline AS (
  SELECT cur.experiment_id, a.action_type, a.occurred_at, i.status AS implied_status,
         row_number() OVER (PARTITION BY cur.experiment_id ORDER BY a.occurred_at DESC, a.seq DESC) AS rn
  FROM current_states cur
  JOIN audit_logs a ON a.name = cur.name AND a.occurred_at <= cur.taken_at
  JOIN implied i ON i.action_type = a.action_type)
SELECT cur.name, cur.experiment_id, cur.layer_id, cur.status, cur.taken_at, t.action_type AS last_action,
       t.occurred_at AS last_at, t.implied_status
FROM current_states cur
LEFT JOIN timeline t ON t.experiment_id = cur.experiment_id AND t.rn = 1
WHERE (t.implied_status IS NULL AND cur.status <> 'setup') OR t.implied_status <> cur.status
ORDER BY cur.name COLLATE "binary", cur.experiment_id COLLATE "binary"`,

  // The current state of every experiment read, by name, for the end of its timeline.
  experimentCurrentStates: `WITH ${CURRENT}
SELECT cur.name, cur.status, cur.taken_at, json_extract(cur.raw, '$.decisionReason') AS decision_reason,
       json_extract(cur.raw, '$.launchedGroupID') AS launched_group_id,
       (SELECT json_extract(g.value, '$.name') FROM json_each(cur.raw, '$.groups') g
        WHERE json_extract(g.value, '$.id') = json_extract(cur.raw, '$.launchedGroupID')) AS launched_group
FROM current_states cur
ORDER BY cur.name COLLATE "binary", cur.taken_at`,

  // Whether the store holds entity history at all (its sections are left out when not).
  entityReads: "SELECT count(*) AS records FROM entity_fetches",
} as const;

/** A field's change in a config version (config_version_changes). */
export interface VersionChange {
  field: string;
  path: string | null;
  change: string;
  old_value: string | null;
  new_value: string | null;
}

/** Change columns null for an edit whose version changed nothing. */
export type ConfigEditVersionChangeRow = RecordRow & { version: number } & Nullable<VersionChange>;

export interface ExperimentCurrentStateRow {
  name: string;
  status: string;
  taken_at: number;
  decision_reason: string | null;
  launched_group_id: string | null;
  launched_group: string | null;
}

export interface EntityReportRows {
  configEditVersionChanges: ConfigEditVersionChangeRow;
  versionsWithoutRecord: {
    config_key: string;
    version: number;
    last_modified_time: number;
    last_modifier_name: string | null;
    last_modifier_id: string | null;
    first_seen_at: number;
  };
  editsWithoutVersion: RecordRow & { last_read: string; read_at: number };
  experimentContradictions: {
    name: string;
    experiment_id: string;
    layer_id: string;
    status: string;
    taken_at: number;
    last_action: string | null;
    last_at: number | null;
    implied_status: string | null;
  };
  experimentCurrentStates: ExperimentCurrentStateRow;
  entityReads: { records: number };
}
