// The entity sections' reads (PostgreSQL; see src/store/reportQueries/entities.ts).
import { C, period } from "./scope.ts";

function csvQuery(view: string): string {
  return `SELECT v.occurred_at, v.id, v.updated_by, v.updated_by_user_id, v.modifier_email, v.name,
       v.action_type, v.change_log, v.rule_diff_summary
FROM ${view} v
WHERE ${period("v")}
ORDER BY v.occurred_at, v.seq`;
}

function entitySummary(view: string, ruleChanges: boolean): string {
  const join = ruleChanges ? "\nLEFT JOIN rule_changes rc ON rc.audit_log_id = v.id" : "";
  // Grouped in byte order, as the rows are ordered: one sort serves both (the same groups: the default
  // collation is deterministic), where grouping by the collation's (ICU's, say) rules sorted twice.
  return `SELECT v.name ${C} AS name, v.updated_by ${C} AS updated_by, v.action_type ${C} AS action_type,
       count(DISTINCT v.id ${C}) AS changes, ${ruleChanges ? "count(rc.id)" : "0"} AS rule_changes,
       min(v.occurred_at) AS first_at, max(v.occurred_at) AS last_at
FROM ${view} v${join}
WHERE ${period("v")}
GROUP BY v.name ${C}, v.updated_by ${C}, v.action_type ${C}
ORDER BY v.name ${C}, v.updated_by ${C} NULLS FIRST, v.action_type ${C}`;
}

export const PG_ENTITY_SECTION_QUERIES = {
  experimentStateChangesCsv: csvQuery("experiment_state_changes"),
  configEditsCsv: csvQuery("config_edits"),

  experimentSummary: entitySummary("experiment_state_changes", false),
  configSummary: entitySummary("config_edits", true),

  experimentTimelines: `SELECT v.name, v.occurred_at, v.action_type, v.updated_by, v.change_log, v.id
FROM experiment_state_changes v
WHERE ${period("v")}
ORDER BY v.name ${C}, v.occurred_at, v.seq`,

  configEdits: `SELECT v.name, v.occurred_at, v.id, v.action_type, v.updated_by, v.change_log, v.rule_diff_summary,
       rc.rule_id, rc.rule_name, rc.change, rc.field, rc.old_value, rc.new_value, rc.old_position,
       rc.new_position
FROM config_edits v
LEFT JOIN rule_changes rc ON rc.audit_log_id = v.id
WHERE ${period("v")}
ORDER BY v.name ${C}, v.occurred_at, v.seq, rc.id NULLS FIRST`,
};
