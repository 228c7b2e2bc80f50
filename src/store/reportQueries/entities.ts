// The entity sections' reads: the change CSVs, per-entity summaries, timelines and config edits.
import { period } from "./scope.ts";

/** A CSV's rows, not in the Markdown: the report folds its per-entity tables from them (one read). */
function csvQuery(view: string, extra = ""): string {
  return `SELECT v.occurred_at, v.id, v.updated_by, v.updated_by_user_id, v.modifier_email, v.name,
       v.action_type, v.change_log, v.rule_diff_summary${extra}
FROM ${view} v
WHERE ${period("v")}
ORDER BY v.occurred_at, v.seq`;
}

function entitySummary(view: string, ruleChanges: boolean): string {
  const join = ruleChanges ? "\nLEFT JOIN rule_changes rc ON rc.audit_log_id = v.id" : "";
  // Grouped in byte order, as ordered: one sort on PostgreSQL, not two (its collation groups the same).
  return `SELECT v.name COLLATE "binary" AS name, v.updated_by COLLATE "binary" AS updated_by,
       v.action_type COLLATE "binary" AS action_type, count(DISTINCT v.seq) AS changes,
       ${ruleChanges ? "count(rc.id)" : "0"} AS rule_changes, min(v.occurred_at) AS first_at,
       max(v.occurred_at) AS last_at
FROM ${view} v${join}
WHERE ${period("v")}
GROUP BY v.name COLLATE "binary", v.updated_by COLLATE "binary", v.action_type COLLATE "binary"
ORDER BY name, updated_by NULLS FIRST, action_type`;
}

export const ENTITY_SECTION_QUERIES = {
  experimentStateChangesCsv: csvQuery("experiment_state_changes"),
  configEditsCsv: csvQuery(
    "config_edits",
    ",\n       (SELECT count(*) FROM rule_changes rc WHERE rc.audit_log_id = v.id) AS rule_changes",
  ),

  // One row per entity, person and action type, folded per entity by the report.
  experimentSummary: entitySummary("experiment_state_changes", false),
  configSummary: entitySummary("config_edits", true),

  experimentTimelines: `SELECT v.name, v.occurred_at, v.action_type, v.updated_by, v.change_log, v.id
FROM experiment_state_changes v
WHERE ${period("v")}
ORDER BY v.name COLLATE "binary", v.occurred_at, v.seq`,

  configEdits: `SELECT v.name, v.occurred_at, v.id, v.action_type, v.updated_by, v.change_log, v.rule_diff_summary,
       rc.rule_id, rc.rule_name, rc.change, rc.field, rc.old_value, rc.new_value, rc.old_position,
       rc.new_position
FROM config_edits v
LEFT JOIN rule_changes rc ON rc.audit_log_id = v.id
WHERE ${period("v")}
ORDER BY v.name COLLATE "binary", v.occurred_at, v.seq, rc.id NULLS FIRST`,
} as const;
