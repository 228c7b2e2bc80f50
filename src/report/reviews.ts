// Which action types make up a review: the request, its approval and its rejection, per kind of
// entity. The report's review section reads these; see docs/reports.md "What the compliance Markdown contains".
import type { AuditActionType } from "../api/actionTypes.ts";

export interface ReviewFlow {
  entity: string;
  create: AuditActionType;
  accept: AuditActionType;
  reject: AuditActionType;
  /** Withdrawing a request: it closes the review without an approval. */
  delete: AuditActionType;
}

export const REVIEW_FLOWS: readonly ReviewFlow[] = [
  {
    entity: "config",
    create: "config_review_create",
    accept: "config_review_accept",
    reject: "config_review_reject",
    delete: "config_review_delete",
  },
  {
    entity: "experiment",
    create: "experiment_review_create",
    accept: "experiment_review_accept",
    reject: "experiment_review_reject",
    delete: "experiment_review_delete",
  },
  {
    entity: "layer",
    create: "layer_review_create",
    accept: "layer_review_accept",
    reject: "layer_review_reject",
    delete: "layer_review_delete",
  },
  {
    entity: "metric",
    create: "metric_review_create",
    accept: "custom_metric_review_accept",
    reject: "custom_metric_review_reject",
    delete: "custom_metric_review_delete",
  },
  {
    entity: "warehouse source",
    create: "create_echidna_source_review",
    accept: "accept_echidna_source_review",
    reject: "reject_echidna_source_review",
    delete: "delete_echidna_source_review",
  },
];

/**
 * The review flow (its `entity`) whose approvals cover a change of each category: the report pairs changes
 * and approvals per kind of entity, so an experiment's review says nothing of a config of the same name.
 * The controls and the export's approval lookup both read this.
 */
export const APPROVING_FLOW: Readonly<Record<string, string>> = {
  config_edit: "config",
  experiment_state_change: "experiment",
};

/**
 * How long an approval covers later changes of its entity, and how far back a review request is looked
 * for: an approval older than this does not make today's change reviewed. It also bounds how much
 * history the review section reads, whatever the size of the store.
 */
export const REVIEW_WINDOW_DAYS = 30;
export const REVIEW_WINDOW_MS = REVIEW_WINDOW_DAYS * 86_400_000;

export const REJECTION_ACTION_TYPES: readonly string[] = REVIEW_FLOWS.map((f) => f.reject);

/**
 * Experiment state changes and config edits that need no approved review before them: creating an
 * entity (nothing to review yet) and the review records themselves. Changes to review settings
 * (config_reviews_disable, config_require_reviews…) are NOT exempt: they are what a reviewer should see.
 */
export const REVIEW_EXEMPT_ACTION_TYPES: readonly AuditActionType[] = [
  "experiment_create",
  "autotune_experiment_create",
  "dynamic_config_create",
  "gate_create",
  "config_review_create",
  "config_review_accept",
  "config_review_reject",
  "config_review_commit",
  "config_review_delete",
  "config_review_update",
  "config_review_info_update",
];
