// The one documented list that sorts every audit action type of the specification into the
// categories the views and reports use. Every type of AUDIT_ACTION_TYPES appears exactly once
// (test/report/categories.test.ts checks it): in EXPERIMENT_STATE_CHANGES, in CONFIG_EDITS, or in
// OTHER_ACTION_TYPES under a reason class that says why it belongs to neither. Action types the
// service sends that are not in the specification have no category: the views leave them out and
// `flagtrail sql` still sees them in audit_logs.
import type { AuditActionType } from "./actionTypes.ts";
import { ANALYSIS_TYPES } from "./otherActionTypes/analysis.ts";
import { EXPERIMENT_AND_CONFIG_SIDE_TYPES } from "./otherActionTypes/experimentsAndConfigs.ts";
import { ORGANIZATION_TYPES } from "./otherActionTypes/organization.ts";

const EXPERIMENT_STATE_CHANGE = "experiment_state_change";
const CONFIG_EDIT = "config_edit";
const OTHER = "other";
export type Category = typeof EXPERIMENT_STATE_CHANGE | typeof CONFIG_EDIT | typeof OTHER;

/** Creation, start (now or scheduled), pause, stop, abandon, decision, rollout, restart, archive, delete. */
export const EXPERIMENT_STATE_CHANGES = [
  "edit_experiment_scheduled_start",
  "autotune_experiment_create",
  "autotune_experiment_delete",
  "experiment_abandon",
  "experiment_pause_assignment",
  "experiment_stopped",
  "experiment_create",
  "experiment_delete",
  "experiment_group_disable",
  "experiment_decision_make",
  "experiment_restart",
  "experiment_restart_as_new",
  "experiment_rollout",
  "experiment_schedule_rollout",
  "experiment_start",
  "schedule_experiment_start",
  "archive_experiment",
  "unarchive_experiment",
  "experiment_schedule_allocation_change",
  "experiment_rollout_allocation_change",
] as const satisfies readonly AuditActionType[];

/** Configs (dynamic configs and gates): creation, rules/conditions, default value, state, environments,
 * revert, resalt, tags, owners, descriptions, overrides and their reviews. */
export const CONFIG_EDITS = [
  "dynamic_config_create",
  "dynamic_config_update_owners",
  "gate_overrides_update",
  "gate_create",
  "gate_update",
  "set_user_sampling_rate_for_gate",
  "gate_update_owners",
  "update_store_0_100_exposures",
  "update_gate_analytics_enabled",
  "update_gate_display_name",
  "update_config_release_pipeline",
  "config_review_accept",
  "config_review_commit",
  "config_review_create",
  "config_delete",
  "config_review_delete",
  "config_reviews_disable",
  "config_review_reject",
  "config_resalt",
  "config_revert",
  "config_require_reviews",
  "config_state_toggle",
  "config_allowed_reviewers_update",
  "config_conditions_update",
  "config_default_value_update",
  "config_description_update",
  "config_display_name_update",
  "config_environments_update",
  "config_review_info_update",
  "config_review_update",
  "config_review_required_update",
  "config_add_tag",
  "config_edit_tags",
  "config_remove_tag",
  "config_monitoring_metrics_update",
  "config_edit_target_apps",
  "update_config_analytics_enabled",
  "update_gate_is_permanent",
  "set_config_auto_archive_state",
  "config_id_type_update",
  "config_update_owners",
  "modify_override_config",
  "modify_overrides",
  "remove_override_config",
  "gate_stale_status_update",
] as const satisfies readonly AuditActionType[];

/** Action types deliberately left out of both views, grouped by the reason why. */
export const OTHER_ACTION_TYPES = {
  ...EXPERIMENT_AND_CONFIG_SIDE_TYPES,
  ...ANALYSIS_TYPES,
  ...ORGANIZATION_TYPES,
} as const;

function buildCategoryMap(): ReadonlyMap<string, Category> {
  const map = new Map<string, Category>();
  for (const type of EXPERIMENT_STATE_CHANGES) map.set(type, EXPERIMENT_STATE_CHANGE);
  for (const type of CONFIG_EDITS) map.set(type, CONFIG_EDIT);
  for (const group of Object.values(OTHER_ACTION_TYPES)) {
    for (const type of group.actionTypes) map.set(type, OTHER);
  }
  return map;
}

export const ACTION_TYPE_CATEGORIES: ReadonlyMap<string, Category> = buildCategoryMap();
