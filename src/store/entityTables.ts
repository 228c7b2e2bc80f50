// The entity history's tables (documented in docs/sync.md), part of the store's tables (tables.ts).
import { bigNumber, epochMs, integer, serial, table, text } from "./tableKinds.ts";

/** raw as received, record_hash as audit_logs', and the row's link in the entity chain (entityChain.ts). */
const entityChained = {
  raw: text().notNull(),
  recordHash: text().notNull(),
  entitySeq: bigNumber().notNull(),
  entityChainHash: text().notNull(),
};

/** A snapshot's time and chained row, after its keys: appendSnapshots (entityWrites.ts) writes this order. */
const snapshotTail = { takenAt: epochMs().notNull(), ...entityChained, syncRunId: integer() };

export const ENTITY_TABLES = {
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

  experimentSnapshots: table(
    "experiment_snapshots",
    {
      id: serial(),
      layerId: text().notNull(),
      experimentId: text().notNull(),
      name: text().notNull(),
      status: text().notNull(),
      ...snapshotTail,
    },
    (on) => [
      on.index("experiment_snapshots_experiment_idx", "experimentId", "takenAt"),
      on.index("experiment_snapshots_name_idx", "name"),
      on.unique("experiment_snapshots_entity_seq_idx", "entitySeq"),
    ],
  ),

  metricSnapshots: table(
    "metric_snapshots",
    {
      id: serial(),
      eventName: text().notNull(),
      metricId: text().notNull(),
      ...snapshotTail,
    },
    (on) => [
      on.index("metric_snapshots_event_idx", "eventName", "metricId", "takenAt"),
      on.unique("metric_snapshots_entity_seq_idx", "entitySeq"),
    ],
  ),

  entityFetches: table(
    "entity_fetches",
    {
      id: serial(),
      kind: text().notNull(),
      entityKey: text().notNull(),
      outcome: text().notNull(),
      items: integer().notNull().default(0),
      invalid: integer().notNull().default(0),
      auditSeq: bigNumber().notNull(),
      fetchedAt: epochMs().notNull(),
      syncRunId: integer(),
    },
    (on) => [on.index("entity_fetches_key_idx", "kind", "entityKey", "auditSeq")],
  ),

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

  configEditLinks: table(
    "config_edit_links",
    {
      auditLogId: text().primaryKey().references("auditLogs", "id"),
      configKey: text().notNull(),
      version: integer().notNull(),
    },
    (on) => [on.index("config_edit_links_version_idx", "configKey", "version")],
  ),

  /** Version 1 diffs against nothing. */
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
