// The entity history's tables (documented in docs/sync.md), part of the store's tables (tables.ts).
import { bigNumber, epochMs, integer, serial, table, text } from "./tableKinds.ts";

/** raw as received, record_hash as audit_logs', and the row's link in the entity chain (entityChain.ts). */
const entityChained = {
  raw: text().notNull(),
  recordHash: text().notNull(),
  entitySeq: bigNumber().notNull(),
  entityChainHash: text().notNull(),
};

export const ENTITY_TABLES = {
  /** One row per (config, version) as first received. Never updated. */
  configVersions: table(
    "config_versions",
    {
      id: serial(),
      /** The config as the audit log names it (its `name`), which is also the id the request used. */
      configKey: text().notNull(),
      configId: text().notNull(),
      version: integer().notNull(),
      lastModifiedTime: epochMs().notNull(),
      lastModifierId: text(),
      lastModifierName: text(),
      ...entityChained,
      firstSeenAt: epochMs().notNull(),
      syncRunId: integer(),
    },
    (on) => [
      on.unique("config_versions_key_version_idx", "configKey", "version"),
      on.index("config_versions_time_idx", "configKey", "lastModifiedTime"),
      on.unique("config_versions_entity_seq_idx", "entitySeq"),
    ],
  ),

  /** A version that came back with other content under the same number: a mutation, kept whole. */
  configVersionRevisions: table(
    "config_version_revisions",
    {
      id: serial(),
      configKey: text().notNull(),
      version: integer().notNull(),
      ...entityChained,
      seenAt: epochMs().notNull(),
      syncRunId: integer(),
    },
    (on) => [
      on.unique("config_version_revisions_idx", "configKey", "version", "recordHash"),
      on.unique("config_version_revisions_entity_seq_idx", "entitySeq"),
    ],
  ),

  /** An experiment as its layer listed it at taken_at; a new row only when its content changed. */
  experimentSnapshots: table(
    "experiment_snapshots",
    {
      id: serial(),
      layerId: text().notNull(),
      experimentId: text().notNull(),
      name: text().notNull(),
      status: text().notNull(),
      takenAt: epochMs().notNull(),
      ...entityChained,
      syncRunId: integer(),
    },
    (on) => [
      on.index("experiment_snapshots_experiment_idx", "experimentId", "takenAt"),
      on.index("experiment_snapshots_name_idx", "name"),
      on.unique("experiment_snapshots_entity_seq_idx", "entitySeq"),
    ],
  ),

  /** A metric derived from an event as listed at taken_at; a new row only when its content changed. */
  metricSnapshots: table(
    "metric_snapshots",
    {
      id: serial(),
      eventName: text().notNull(),
      metricId: text().notNull(),
      takenAt: epochMs().notNull(),
      ...entityChained,
      syncRunId: integer(),
    },
    (on) => [
      on.index("metric_snapshots_event_idx", "eventName", "metricId", "takenAt"),
      on.unique("metric_snapshots_entity_seq_idx", "entitySeq"),
    ],
  ),

  /** Every entity read and how it ended: ok, not_found (a deleted entity) or forbidden (no scope). */
  entityFetches: table(
    "entity_fetches",
    {
      id: serial(),
      /** config_versions | layer_experiments | event_metrics */
      kind: text().notNull(),
      entityKey: text().notNull(),
      outcome: text().notNull(),
      items: integer().notNull().default(0),
      /** Items that failed their schema (quarantined). */
      invalid: integer().notNull().default(0),
      /** audit_logs.seq of the newest record stored when the read was made: what it has caught up with. */
      auditSeq: bigNumber().notNull(),
      fetchedAt: epochMs().notNull(),
      syncRunId: integer(),
    },
    (on) => [on.index("entity_fetches_key_idx", "kind", "entityKey", "auditSeq")],
  ),

  /** Entities due for a read that the last entity pass left to later runs (src/store/entityBacklog.ts). */
  entityBacklog: table(
    "entity_backlog",
    {
      kind: text().notNull(),
      entityKey: text().notNull(),
      /** audit_logs.seq of the newest record naming it: the budget reads the most recent first. */
      newestSeq: bigNumber().notNull(),
      /** When a pass first left it unread; kept while it stays pending. */
      pendingSince: epochMs().notNull(),
      syncRunId: integer(),
    },
    (on) => [on.primaryKey("kind", "entityKey")],
  ),

  /** Each config-edit audit record and the version it produced (derived: recomputed after each read). */
  configEditLinks: table(
    "config_edit_links",
    {
      auditLogId: text().primaryKey().references("auditLogs", "id"),
      configKey: text().notNull(),
      version: integer().notNull(),
    },
    (on) => [on.index("config_edit_links_version_idx", "configKey", "version")],
  ),

  /** Field-level diff of a version against the one before it (derived; version 1 diffs against nothing). */
  configVersionChanges: table(
    "config_version_changes",
    {
      id: serial(),
      configKey: text().notNull(),
      version: integer().notNull(),
      previousVersion: integer(),
      /** defaultValue | rules | isEnabled | description | tags | targetApps | schema | any other field */
      field: text().notNull(),
      /** JSON path under defaultValue ($.a.b), the rule diff's field, else NULL. */
      path: text(),
      /** added | removed | changed (rules: added | removed | modified | moved); values as JSON text. */
      change: text().notNull(),
      oldValue: text(),
      newValue: text(),
    },
    (on) => [on.index("config_version_changes_idx", "configKey", "version")],
  ),
};
