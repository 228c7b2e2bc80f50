// Which audit records bear on the entity reads: the config edits that store a new dynamic config
// version (gates have no versions; reviews change nothing until committed, and then the commit's own
// edit record follows), and the records that name a layer or move an experiment.
import type { AuditActionType } from "./actionTypes.ts";

/** Config edits after which a dynamic config has a new stored version. */
export const VERSIONED_CONFIG_EDITS = [
  "dynamic_config_create",
  "dynamic_config_update_owners",
  "config_conditions_update",
  "config_default_value_update",
  "config_description_update",
  "config_display_name_update",
  "config_environments_update",
  "config_state_toggle",
  "config_revert",
  "config_resalt",
  "config_add_tag",
  "config_edit_tags",
  "config_remove_tag",
  "config_edit_target_apps",
  "config_id_type_update",
  "config_update_owners",
  "config_monitoring_metrics_update",
] as const satisfies readonly AuditActionType[];

/** Records whose `name` is a layer's id. */
export const LAYER_ACTIONS = [
  "layer_create",
  "layer_edit",
  "layer_description_edit",
  "layer_parameters_edit",
  "layer_parameter_add",
  "layer_update_owners",
  "layer_update_target_apps",
  "layer_overrides_edit",
  "update_layer_parameter",
  "delete_layer_parameter",
  "layer_delete",
] as const satisfies readonly AuditActionType[];

/** Records that move an experiment into a layer without naming the layer. */
export const EXPERIMENT_LAYER_MOVES = [
  "experiment_assigned_to_layer",
] as const satisfies readonly AuditActionType[];
