// The PostgreSQL schema, the source of drizzle-kit's migrations in drizzle/pg/ (the views and full-text
// search are in a custom migration there). It mirrors src/store/schema.ts table for table and column for
// column, in the column order SQLite stores have after their migrations (test/pg/schema.test.ts checks
// both), so that ad hoc SQL and `SELECT *` read the same on both engines.
// Types keep values identical when read back: text for every string (raw JSON too: its exact bytes are
// hashed, which jsonb would reorder and respace), bigint read as a JS number for epoch milliseconds and
// seq, integer for counts and flags (0/1 as on SQLite, not boolean).
import { sql } from "drizzle-orm";
import { bigint, index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";

/** Epoch milliseconds UTC: past int4's range, and well within a JS number's exact integers. */
const epochMs = (name: string) => bigint(name, { mode: "number" });

/** One row per audit log record, first version as received. Never updated once written. */
export const auditLogs = pgTable(
  "audit_logs",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    actionType: text("action_type").notNull(),
    changeLog: text("change_log"),
    updatedBy: text("updated_by"),
    updatedByUserId: text("updated_by_user_id"),
    modifierEmail: text("modifier_email"),
    occurredAt: epochMs("occurred_at"),
    serverDay: text("server_day"),
    dateText: text("date_text").notNull(),
    timeText: text("time_text").notNull(),
    tags: text("tags"),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    chainHash: text("chain_hash").notNull(),
    firstSeenAt: epochMs("first_seen_at").notNull(),
    syncRunId: integer("sync_run_id"),
    /**
     * The record's `changes` read from `raw`, last as on SQLite (where migration 0003 re-added it).
     * `->>` gives the member's text as it stands in `raw` and SQL NULL for JSON null, like SQLite's
     * json_extract. STORED: virtual generated columns exist only from PostgreSQL 18 on.
     */
    changes: text("changes").generatedAlwaysAs(sql`coalesce(raw::json ->> 'changes', '{}')`),
  },
  (t) => [
    index("audit_logs_occurred_at_idx").on(t.occurredAt),
    index("audit_logs_server_day_idx").on(t.serverDay),
    // Covers what the report reads of a category's records (views experiment_state_changes, config_edits)
    // besides the CSV columns: the unreviewed-change window and the per-entity summaries then read
    // the index alone instead of a table row per record (bench/report.ts).
    index("audit_logs_action_type_idx").on(t.actionType, t.occurredAt, t.seq, t.name, t.updatedBy, t.id),
    index("audit_logs_name_idx").on(t.name),
    uniqueIndex("audit_logs_seq_idx").on(t.seq),
  ],
);

/** Later versions of a record whose id was already stored with other content (a mutation). */
export const auditLogRevisions = pgTable(
  "audit_log_revisions",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    auditLogId: text("audit_log_id").notNull(),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    seenAt: epochMs("seen_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [uniqueIndex("audit_log_revisions_id_hash_idx").on(t.auditLogId, t.recordHash)],
);

/** Records that failed validation: kept whole, with every zod issue, never dropped. */
export const quarantine = pgTable(
  "quarantine",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    recordId: text("record_id"),
    raw: text("raw").notNull(),
    rawHash: text("raw_hash").notNull(),
    issues: text("issues").notNull(),
    requestPath: text("request_path"),
    receivedAt: epochMs("received_at").notNull(),
    syncRunId: integer("sync_run_id"),
    serverDay: text("server_day"),
    dayMin: text("day_min"),
    dayMax: text("day_max"),
  },
  (t) => [uniqueIndex("quarantine_raw_hash_idx").on(t.rawHash)],
);

/** One row per `flagtrail sync` (and per daemon cycle). `retries` is last, as SQLite added it later. */
export const syncRuns = pgTable(
  "sync_runs",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    startedAt: epochMs("started_at").notNull(),
    finishedAt: epochMs("finished_at"),
    outcome: text("outcome").notNull().default("running"),
    filterKey: text("filter_key").notNull(),
    params: text("params").notNull(),
    fetched: integer("fetched").notNull().default(0),
    inserted: integer("inserted").notNull().default(0),
    duplicates: integer("duplicates").notNull().default(0),
    mutations: integer("mutations").notNull().default(0),
    quarantined: integer("quarantined").notNull().default(0),
    warnings: integer("warnings").notNull().default(0),
    requests: integer("requests").notNull().default(0),
    throttled: integer("throttled").notNull().default(0),
    error: text("error"),
    pid: integer("pid"),
    retries: integer("retries").notNull().default(0),
  },
  (t) => [index("sync_runs_started_at_idx").on(t.startedAt)],
);

/** Newest record id seen per filter set: sent as latestID on the next incremental run. */
export const checkpoints = pgTable("checkpoints", {
  filterKey: text("filter_key").primaryKey(),
  latestId: text("latest_id").notNull(),
  latestOccurredAt: epochMs("latest_occurred_at"),
  updatedAt: epochMs("updated_at").notNull(),
  syncRunId: integer("sync_run_id"),
});

/** Progress through the date windows of a range, so that a killed run resumes where it stopped. */
export const syncWindows = pgTable(
  "sync_windows",
  {
    filterKey: text("filter_key").notNull(),
    startDate: text("start_date").notNull(),
    endDate: text("end_date").notNull(),
    status: text("status").notNull().default("pending"),
    nextPage: integer("next_page").notNull().default(1),
    updatedAt: epochMs("updated_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [primaryKey({ columns: [t.filterKey, t.startDate, t.endDate] })],
);

/** Per server day: how many records the server says exist and how many the store holds. */
export const coverage = pgTable(
  "coverage",
  {
    filterKey: text("filter_key").notNull(),
    day: text("day").notNull(),
    serverTotal: integer("server_total").notNull(),
    localCount: integer("local_count").notNull(),
    checkedAt: epochMs("checked_at").notNull(),
    syncRunId: integer("sync_run_id"),
    dayClosed: integer("day_closed").notNull().default(0),
    quarantinedCount: integer("quarantined_count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.filterKey, t.day] })],
);

/**
 * Who holds which lease, for `status`. On PostgreSQL the lease itself is a session-level advisory lock
 * (src/store/pg/leaseLocks.ts): the row only says who took it, and since when.
 */
export const leases = pgTable("leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  pid: integer("pid").notNull(),
  acquiredAt: epochMs("acquired_at").notNull(),
  expiresAt: epochMs("expires_at").notNull(),
});

/** One row per changed rule field, derived from changes.rules.old → new. */
export const ruleChanges = pgTable(
  "rule_changes",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    auditLogId: text("audit_log_id")
      .notNull()
      .references(() => auditLogs.id),
    ruleId: text("rule_id").notNull(),
    ruleName: text("rule_name"),
    change: text("change").notNull(),
    field: text("field"),
    oldValue: text("old_value"),
    newValue: text("new_value"),
    oldPosition: integer("old_position"),
    newPosition: integer("new_position"),
  },
  (t) => [
    index("rule_changes_audit_log_id_idx").on(t.auditLogId),
    index("rule_changes_rule_id_idx").on(t.ruleId),
  ],
);

/** The one-line human summary of a record's rule diff; its presence marks the record as diffed. */
export const ruleDiffSummaries = pgTable("rule_diff_summaries", {
  auditLogId: text("audit_log_id")
    .primaryKey()
    .references(() => auditLogs.id),
  summary: text("summary").notNull(),
  diffVersion: integer("diff_version").notNull(),
});

/** The server day a single-day request listed a record under, when that differs from its own date. */
export const listedDays = pgTable("listed_days", {
  auditLogId: text("audit_log_id")
    .primaryKey()
    .references(() => auditLogs.id),
  day: text("day").notNull(),
});

/** Category of each action type (experiment_state | config_edit | …), written from code at open. */
export const actionTypeCategories = pgTable("action_type_categories", {
  actionType: text("action_type").primaryKey(),
  category: text("category").notNull(),
});

/** Store-level facts: hash chain head, server time zone seen, schema notes. */
export const meta = pgTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  // Whole seconds × 1000, as SQLite's unixepoch() * 1000.
  updatedAt: epochMs("updated_at").notNull().default(sql`(floor(extract(epoch from now())) * 1000)::bigint`),
});

// Entity history (issue 10), as in src/store/schema.ts: content rows append-only, linked in the entity
// hash chain by entity_seq.

const seqNumber = (name: string) => bigint(name, { mode: "number" });

/** One row per (config, version) as first received. Never updated. */
export const configVersions = pgTable(
  "config_versions",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    configKey: text("config_key").notNull(),
    configId: text("config_id").notNull(),
    version: integer("version").notNull(),
    lastModifiedTime: epochMs("last_modified_time").notNull(),
    lastModifierId: text("last_modifier_id"),
    lastModifierName: text("last_modifier_name"),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    entitySeq: seqNumber("entity_seq").notNull(),
    entityChainHash: text("entity_chain_hash").notNull(),
    firstSeenAt: epochMs("first_seen_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [
    uniqueIndex("config_versions_key_version_idx").on(t.configKey, t.version),
    index("config_versions_time_idx").on(t.configKey, t.lastModifiedTime),
    uniqueIndex("config_versions_entity_seq_idx").on(t.entitySeq),
  ],
);

/** A version that came back with other content under the same number: a mutation, kept whole. */
export const configVersionRevisions = pgTable(
  "config_version_revisions",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    configKey: text("config_key").notNull(),
    version: integer("version").notNull(),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    entitySeq: seqNumber("entity_seq").notNull(),
    entityChainHash: text("entity_chain_hash").notNull(),
    seenAt: epochMs("seen_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [
    uniqueIndex("config_version_revisions_idx").on(t.configKey, t.version, t.recordHash),
    uniqueIndex("config_version_revisions_entity_seq_idx").on(t.entitySeq),
  ],
);

/** An experiment as its layer listed it at taken_at; a new row only when its content changed. */
export const experimentSnapshots = pgTable(
  "experiment_snapshots",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    layerId: text("layer_id").notNull(),
    experimentId: text("experiment_id").notNull(),
    name: text("name").notNull(),
    status: text("status").notNull(),
    takenAt: epochMs("taken_at").notNull(),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    entitySeq: seqNumber("entity_seq").notNull(),
    entityChainHash: text("entity_chain_hash").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [
    index("experiment_snapshots_experiment_idx").on(t.experimentId, t.takenAt),
    index("experiment_snapshots_name_idx").on(t.name),
    uniqueIndex("experiment_snapshots_entity_seq_idx").on(t.entitySeq),
  ],
);

/** A metric derived from an event as listed at taken_at; a new row only when its content changed. */
export const metricSnapshots = pgTable(
  "metric_snapshots",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    eventName: text("event_name").notNull(),
    metricId: text("metric_id").notNull(),
    takenAt: epochMs("taken_at").notNull(),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    entitySeq: seqNumber("entity_seq").notNull(),
    entityChainHash: text("entity_chain_hash").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [
    index("metric_snapshots_event_idx").on(t.eventName, t.metricId, t.takenAt),
    uniqueIndex("metric_snapshots_entity_seq_idx").on(t.entitySeq),
  ],
);

/** Every entity read and how it ended: ok, not_found (a deleted entity) or forbidden (no scope). */
export const entityFetches = pgTable(
  "entity_fetches",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    kind: text("kind").notNull(),
    entityKey: text("entity_key").notNull(),
    outcome: text("outcome").notNull(),
    items: integer("items").notNull().default(0),
    invalid: integer("invalid").notNull().default(0),
    auditSeq: seqNumber("audit_seq").notNull(),
    fetchedAt: epochMs("fetched_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [index("entity_fetches_key_idx").on(t.kind, t.entityKey, t.auditSeq)],
);

/** The entity backlog (src/store/schema.ts). */
export const entityBacklog = pgTable(
  "entity_backlog",
  {
    kind: text("kind").notNull(),
    entityKey: text("entity_key").notNull(),
    newestSeq: seqNumber("newest_seq").notNull(),
    pendingSince: epochMs("pending_since").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [primaryKey({ columns: [t.kind, t.entityKey] })],
);

/** Each config-edit audit record and the version it produced (derived: recomputed after each read). */
export const configEditLinks = pgTable(
  "config_edit_links",
  {
    auditLogId: text("audit_log_id")
      .primaryKey()
      .references(() => auditLogs.id),
    configKey: text("config_key").notNull(),
    version: integer("version").notNull(),
  },
  (t) => [index("config_edit_links_version_idx").on(t.configKey, t.version)],
);

/** Field-level diff of a version against the one before it (derived; version 1 diffs against nothing). */
export const configVersionChanges = pgTable(
  "config_version_changes",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    configKey: text("config_key").notNull(),
    version: integer("version").notNull(),
    previousVersion: integer("previous_version"),
    field: text("field").notNull(),
    path: text("path"),
    change: text("change").notNull(),
    oldValue: text("old_value"),
    newValue: text("new_value"),
  },
  (t) => [index("config_version_changes_idx").on(t.configKey, t.version)],
);

// Controls (issue 23), as in src/store/schema.ts.

export const controlFindings = pgTable(
  "control_findings",
  {
    id: text("id").primaryKey(),
    controlId: text("control_id").notNull(),
    kind: text("kind").notNull(),
    severity: text("severity").notNull(),
    recordId: text("record_id"),
    entity: text("entity"),
    actionType: text("action_type"),
    occurredAt: epochMs("occurred_at"),
    actor: text("actor"),
    message: text("message").notNull(),
    firstSeenAt: epochMs("first_seen_at").notNull(),
    lastSeenAt: epochMs("last_seen_at").notNull(),
  },
  (t) => [index("control_findings_control_idx").on(t.controlId)],
);

export const controlTickets = pgTable(
  "control_tickets",
  {
    recordId: text("record_id").notNull(),
    controlId: text("control_id").notNull(),
    ticket: text("ticket").notNull(),
  },
  (t) => [primaryKey({ columns: [t.recordId, t.controlId] })],
);

export const controlChecks = pgTable("control_checks", {
  id: seqNumber("id").primaryKey(),
  checkedAt: epochMs("checked_at").notNull(),
  periodStart: epochMs("period_start").notNull(),
  periodEnd: epochMs("period_end").notNull(),
  findings: integer("findings").notNull(),
});

export const controlWaivers = pgTable(
  "control_waivers",
  {
    seq: seqNumber("seq").primaryKey(),
    findingId: text("finding_id").notNull(),
    action: text("action").notNull(),
    reason: text("reason").notNull(),
    byName: text("by_name").notNull(),
    expires: text("expires"),
    createdAt: epochMs("created_at").notNull(),
    hash: text("hash").notNull(),
    chainHash: text("chain_hash").notNull(),
  },
  (t) => [index("control_waivers_finding_idx").on(t.findingId)],
);

export const controlOutbox = pgTable(
  "control_outbox",
  {
    findingId: text("finding_id").notNull(),
    sink: text("sink").notNull(),
    payload: text("payload").notNull(),
    createdAt: epochMs("created_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: epochMs("next_attempt_at").notNull(),
    deliveredAt: epochMs("delivered_at"),
    lastError: text("last_error"),
  },
  (t) => [primaryKey({ columns: [t.findingId, t.sink] })],
);

/** Per project and consumer name: the audit_logs.seq up to which its exports are complete. */
export const exportCursors = pgTable(
  "export_cursors",
  {
    project: text("project").notNull(),
    name: text("name").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    updatedAt: epochMs("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.project, t.name] })],
);
