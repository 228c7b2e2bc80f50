// The SQLite schema, the source of drizzle-kit's migrations in drizzle/.
// It is a public interface for ad hoc SQL (see docs/sql.md "Tables"): columns may be added, never renamed.
import { sql } from "drizzle-orm";
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** A field of the record, read from its stored JSON (see `rawData`). */
const fromRaw = (path: string) => sql.raw(`json_extract(raw_data, '$.${path}')`);

/**
 * One row per audit log record, first version as received. Never updated once written. One copy of the
 * record is on disk (`raw_data`, with the store's own columns); the documented columns that repeat a
 * field of it are virtual generated columns read from it (0011), in their places, with their values.
 */
export const auditLogs = sqliteTable(
  "audit_logs",
  {
    id: text("id").notNull().generatedAlwaysAs(fromRaw("id"), { mode: "virtual" }),
    name: text("name").notNull().generatedAlwaysAs(fromRaw("name"), { mode: "virtual" }),
    actionType: text("action_type").notNull().generatedAlwaysAs(fromRaw("actionType"), { mode: "virtual" }),
    changeLog: text("change_log").generatedAlwaysAs(fromRaw("changeLog"), { mode: "virtual" }),
    updatedBy: text("updated_by").generatedAlwaysAs(fromRaw("updatedBy"), { mode: "virtual" }),
    // Stored: the report reads both for every record of its period (by person, the CSVs); read from
    // raw_data its CPU grew by ~7 % (one month of a 300k-record store).
    updatedByUserId: text("updated_by_user_id"),
    /** A string as sent, or the JSON text when the service sent an object. */
    modifierEmail: text("modifier_email"),
    /** Epoch ms UTC parsed from date_text + time_text; NULL when they could not be parsed. */
    occurredAt: integer("occurred_at"),
    /** The record's calendar day in the server's zone (YYYY-MM-DD), from its own `date` text. */
    serverDay: text("server_day"),
    dateText: text("date_text").notNull().generatedAlwaysAs(fromRaw("date"), { mode: "virtual" }),
    timeText: text("time_text").notNull().generatedAlwaysAs(fromRaw("time"), { mode: "virtual" }),
    /** JSON array or NULL when the record had no tags. */
    tags: text("tags").generatedAlwaysAs(fromRaw("tags"), { mode: "virtual" }),
    /** JSON of the record exactly as received (the text of `raw_data`). */
    raw: text("raw")
      .notNull()
      .generatedAlwaysAs(sql`CASE WHEN typeof(raw_data) = 'blob' THEN json(raw_data) ELSE raw_data END`, {
        mode: "virtual",
      }),
    /** SHA-256 (hex) of the record's canonical JSON. */
    recordHash: text("record_hash")
      .notNull()
      .generatedAlwaysAs(sql`lower(hex(record_hash_bytes))`, { mode: "virtual" }),
    /** Insertion order; the hash chain runs over it. The rowid: the table is stored in this order. */
    seq: integer("seq").primaryKey(),
    /** SHA-256 of (previous chain_hash + record_hash): tampering with any earlier row breaks it. */
    chainHash: text("chain_hash")
      .notNull()
      .generatedAlwaysAs(sql`lower(hex(chain_hash_bytes))`, { mode: "virtual" }),
    firstSeenAt: integer("first_seen_at").notNull(),
    syncRunId: integer("sync_run_id"),
    /** JSON object: the record's `changes`. */
    changes: text("changes").generatedAlwaysAs(sql`coalesce(json_extract(raw_data, '$.changes'), '{}')`, {
      mode: "virtual",
    }),
    /**
     * The record as SQLite's binary JSON (JSONB: ~10 % smaller than the text, read by json_extract
     * without parsing), or the text itself if JSONB would not give it back byte for byte.
     */
    rawData: blob("raw_data").notNull(),
    recordHashBytes: blob("record_hash_bytes").notNull(),
    chainHashBytes: blob("chain_hash_bytes").notNull(),
  },
  // Each index and the query that needs it (an index on a virtual column holds its values itself).
  (t) => [
    // The writer's dedupe on id; the foreign keys of rule_changes, rule_diff_summaries, listed_days….
    uniqueIndex("audit_logs_id_idx").on(t.id),
    // A period of every action type: the report's counts (reportQueries/overview.ts), export's
    // --from/--to (export/records.ts), the newest record (coverageState.ts).
    index("audit_logs_occurred_at_idx").on(t.occurredAt),
    // Records per server day: the sync's coverage counts (coverageCounts.ts), the report's completeness
    // section (reportQueries/completeness.ts).
    index("audit_logs_server_day_idx").on(t.serverDay),
    // Covers what the report reads of a category's records (views experiment_state_changes, config_edits)
    // besides the CSV columns: the unreviewed-change window and the per-entity summaries then read
    // the index alone instead of a table row per record (bench/report.ts).
    index("audit_logs_action_type_idx").on(t.actionType, t.occurredAt, t.seq, t.name, t.updatedBy, t.id),
    // One entity's records: a config's edits (entityLinks.ts), an experiment's states
    // (entityReportQueries.ts), the approval before a change (export/records.ts).
    index("audit_logs_name_idx").on(t.name),
  ],
);

/** Later versions of a record whose id was already stored with other content (a mutation). */
export const auditLogRevisions = sqliteTable(
  "audit_log_revisions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    auditLogId: text("audit_log_id").notNull(),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    seenAt: integer("seen_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [uniqueIndex("audit_log_revisions_id_hash_idx").on(t.auditLogId, t.recordHash)],
);

/** Records that failed validation: kept whole, with every zod issue, never dropped. */
export const quarantine = sqliteTable(
  "quarantine",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** The record's id when it had a usable one. */
    recordId: text("record_id"),
    raw: text("raw").notNull(),
    rawHash: text("raw_hash").notNull(),
    /** JSON array of zod issues. */
    issues: text("issues").notNull(),
    requestPath: text("request_path"),
    receivedAt: integer("received_at").notNull(),
    syncRunId: integer("sync_run_id"),
    /** The record's server day from its raw `date` text when that parses (for coverage), else NULL. */
    serverDay: text("server_day"),
    /**
     * The narrowest startDate..endDate of a request that returned it: when its own date is unreadable,
     * coverage counts it for any range holding these bounds (and a narrower re-read narrows them).
     */
    dayMin: text("day_min"),
    dayMax: text("day_max"),
  },
  (t) => [uniqueIndex("quarantine_raw_hash_idx").on(t.rawHash)],
);

/** One row per `flagtrail sync` (and per daemon cycle). */
export const syncRuns = sqliteTable(
  "sync_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    startedAt: integer("started_at").notNull(),
    finishedAt: integer("finished_at"),
    /** running | ok | failed | interrupted */
    outcome: text("outcome").notNull().default("running"),
    /** Identifies the filter set (action types) whose checkpoint the run advances. */
    filterKey: text("filter_key").notNull(),
    /** JSON of the run's parameters (range, action types, page size…). Never holds the key. */
    params: text("params").notNull(),
    fetched: integer("fetched").notNull().default(0),
    inserted: integer("inserted").notNull().default(0),
    duplicates: integer("duplicates").notNull().default(0),
    mutations: integer("mutations").notNull().default(0),
    quarantined: integer("quarantined").notNull().default(0),
    warnings: integer("warnings").notNull().default(0),
    requests: integer("requests").notNull().default(0),
    throttled: integer("throttled").notNull().default(0),
    /** Requests sent again after a failed attempt (5xx, 429, reset, truncated body). */
    retries: integer("retries").notNull().default(0),
    error: text("error"),
    pid: integer("pid"),
  },
  (t) => [index("sync_runs_started_at_idx").on(t.startedAt)],
);

/** Newest record id seen per filter set: sent as latestID on the next incremental run. */
export const checkpoints = sqliteTable("checkpoints", {
  filterKey: text("filter_key").primaryKey(),
  latestId: text("latest_id").notNull(),
  latestOccurredAt: integer("latest_occurred_at"),
  updatedAt: integer("updated_at").notNull(),
  syncRunId: integer("sync_run_id"),
});

/** Progress through the date windows of a range, so that a killed run resumes where it stopped. */
export const syncWindows = sqliteTable(
  "sync_windows",
  {
    filterKey: text("filter_key").notNull(),
    startDate: text("start_date").notNull(),
    endDate: text("end_date").notNull(),
    /** pending | done */
    status: text("status").notNull().default("pending"),
    /** Next page to request (1-based) while pending. */
    nextPage: integer("next_page").notNull().default(1),
    updatedAt: integer("updated_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [primaryKey({ columns: [t.filterKey, t.startDate, t.endDate] })],
);

/** Per server day: how many records the server says exist and how many the store holds. */
export const coverage = sqliteTable(
  "coverage",
  {
    filterKey: text("filter_key").notNull(),
    day: text("day").notNull(),
    serverTotal: integer("server_total").notNull(),
    localCount: integer("local_count").notNull(),
    checkedAt: integer("checked_at").notNull(),
    syncRunId: integer("sync_run_id"),
    /** 1 when the server's day had ended when it was checked; 0 = still open, re-checked next sync. */
    dayClosed: integer("day_closed").notNull().default(0),
    /** How many of local_count are in quarantine (stored, but failed validation). */
    quarantinedCount: integer("quarantined_count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.filterKey, t.day] })],
);

/** Leases: one sync and one daemon per database. A lease past expires_at is free to take. */
export const leases = sqliteTable("leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  pid: integer("pid").notNull(),
  acquiredAt: integer("acquired_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
});

/** One row per changed rule field, derived from changes.rules.old → new. */
export const ruleChanges = sqliteTable(
  "rule_changes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    auditLogId: text("audit_log_id")
      .notNull()
      .references(() => auditLogs.id),
    ruleId: text("rule_id").notNull(),
    ruleName: text("rule_name"),
    /** added | removed | modified | moved */
    change: text("change").notNull(),
    /** Field path for `modified` rows, e.g. percentagePass, condition[1].value, returnValueJSON $.color */
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
export const ruleDiffSummaries = sqliteTable("rule_diff_summaries", {
  auditLogId: text("audit_log_id")
    .primaryKey()
    .references(() => auditLogs.id),
  summary: text("summary").notNull(),
  /** Bumped when the diff code changes, so that stored diffs are recomputed. */
  diffVersion: integer("diff_version").notNull(),
});

/**
 * The server day a single-day request listed a record under, when that differs from the day of its own
 * `date` text (a server that writes some texts in another zone than the one it files days in). Coverage
 * counts such a record on the day the server lists it under, so that a gap report means a missing record.
 */
export const listedDays = sqliteTable("listed_days", {
  auditLogId: text("audit_log_id")
    .primaryKey()
    .references(() => auditLogs.id),
  day: text("day").notNull(),
});

/** Category of each action type (experiment_state | config_edit | …), written from code at open. */
export const actionTypeCategories = sqliteTable("action_type_categories", {
  actionType: text("action_type").primaryKey(),
  category: text("category").notNull(),
});

/** Store-level facts: hash chain head, server time zone seen, schema notes. */
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  updatedAt: integer("updated_at").notNull().default(sql`(unixepoch() * 1000)`),
});

// Entity history (issue 10): what the console's other reads say about the entities the audit log
// names. Content rows are append-only and linked in one hash chain of their own (entity_seq,
// entity_chain_hash across config_versions, config_version_revisions, experiment_snapshots and
// metric_snapshots, in entity_seq order), which `verify` walks like the record chain.

/** One row per (config, version) as first received. Never updated. */
export const configVersions = sqliteTable(
  "config_versions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** The config as the audit log names it (its `name`), which is also the id the request used. */
    configKey: text("config_key").notNull(),
    /** The record's own `id`. */
    configId: text("config_id").notNull(),
    version: integer("version").notNull(),
    /** Epoch ms of the version (`lastModifiedTime`). */
    lastModifiedTime: integer("last_modified_time").notNull(),
    lastModifierId: text("last_modifier_id"),
    lastModifierName: text("last_modifier_name"),
    /** JSON of the version record exactly as received. */
    raw: text("raw").notNull(),
    /** SHA-256 of the record's canonical JSON (same function as audit_logs.record_hash). */
    recordHash: text("record_hash").notNull(),
    entitySeq: integer("entity_seq").notNull(),
    entityChainHash: text("entity_chain_hash").notNull(),
    firstSeenAt: integer("first_seen_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [
    uniqueIndex("config_versions_key_version_idx").on(t.configKey, t.version),
    index("config_versions_time_idx").on(t.configKey, t.lastModifiedTime),
    uniqueIndex("config_versions_entity_seq_idx").on(t.entitySeq),
  ],
);

/** A version that came back with other content under the same number: a mutation, kept whole. */
export const configVersionRevisions = sqliteTable(
  "config_version_revisions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    configKey: text("config_key").notNull(),
    version: integer("version").notNull(),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    entitySeq: integer("entity_seq").notNull(),
    entityChainHash: text("entity_chain_hash").notNull(),
    seenAt: integer("seen_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [
    uniqueIndex("config_version_revisions_idx").on(t.configKey, t.version, t.recordHash),
    uniqueIndex("config_version_revisions_entity_seq_idx").on(t.entitySeq),
  ],
);

/** An experiment as its layer listed it at taken_at; a new row only when its content changed. */
export const experimentSnapshots = sqliteTable(
  "experiment_snapshots",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    layerId: text("layer_id").notNull(),
    experimentId: text("experiment_id").notNull(),
    name: text("name").notNull(),
    status: text("status").notNull(),
    takenAt: integer("taken_at").notNull(),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    entitySeq: integer("entity_seq").notNull(),
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
export const metricSnapshots = sqliteTable(
  "metric_snapshots",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    eventName: text("event_name").notNull(),
    metricId: text("metric_id").notNull(),
    takenAt: integer("taken_at").notNull(),
    raw: text("raw").notNull(),
    recordHash: text("record_hash").notNull(),
    entitySeq: integer("entity_seq").notNull(),
    entityChainHash: text("entity_chain_hash").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [
    index("metric_snapshots_event_idx").on(t.eventName, t.metricId, t.takenAt),
    uniqueIndex("metric_snapshots_entity_seq_idx").on(t.entitySeq),
  ],
);

/** Every entity read and how it ended: ok, not_found (a deleted entity) or forbidden (no scope). */
export const entityFetches = sqliteTable(
  "entity_fetches",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** config_versions | layer_experiments | event_metrics */
    kind: text("kind").notNull(),
    entityKey: text("entity_key").notNull(),
    outcome: text("outcome").notNull(),
    items: integer("items").notNull().default(0),
    /** Items that failed their schema (their count; the read's raw items are not kept). */
    invalid: integer("invalid").notNull().default(0),
    /** audit_logs.seq of the newest record stored when the read was made: what it has caught up with. */
    auditSeq: integer("audit_seq").notNull(),
    fetchedAt: integer("fetched_at").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [index("entity_fetches_key_idx").on(t.kind, t.entityKey, t.auditSeq)],
);

/**
 * The entity backlog: entities due for a read that the last entity pass left to later runs (its request
 * budget was spent). Rewritten by every entity pass; the due-lists stay the truth of what is due.
 */
export const entityBacklog = sqliteTable(
  "entity_backlog",
  {
    kind: text("kind").notNull(),
    entityKey: text("entity_key").notNull(),
    /** audit_logs.seq of the newest record naming it: the budget reads the most recent first. */
    newestSeq: integer("newest_seq").notNull(),
    /** When a pass first left it unread (epoch ms); kept while it stays pending. */
    pendingSince: integer("pending_since").notNull(),
    syncRunId: integer("sync_run_id"),
  },
  (t) => [primaryKey({ columns: [t.kind, t.entityKey] })],
);

/** Each config-edit audit record and the version it produced (derived: recomputed after each read). */
export const configEditLinks = sqliteTable(
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
export const configVersionChanges = sqliteTable(
  "config_version_changes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    configKey: text("config_key").notNull(),
    version: integer("version").notNull(),
    previousVersion: integer("previous_version"),
    /** defaultValue | rules | isEnabled | description | tags | targetApps | schema | any other field */
    field: text("field").notNull(),
    /** JSON path under defaultValue ($.a.b), the rule diff's field, else NULL. */
    path: text("path"),
    /** added | removed | changed (rules: added | removed | modified | moved) */
    change: text("change").notNull(),
    /** JSON text of the values. */
    oldValue: text("old_value"),
    newValue: text("new_value"),
  },
  (t) => [index("config_version_changes_idx").on(t.configKey, t.version)],
);

// Controls (issue 23): what `flagtrail check` found, the waivers given, and the alerts still to deliver.

/** One row per finding (control id + record or evidence key): first and last seen by a check. */
export const controlFindings = sqliteTable(
  "control_findings",
  {
    id: text("id").primaryKey(),
    controlId: text("control_id").notNull(),
    kind: text("kind").notNull(),
    severity: text("severity").notNull(),
    recordId: text("record_id"),
    entity: text("entity"),
    actionType: text("action_type"),
    occurredAt: integer("occurred_at"),
    actor: text("actor"),
    message: text("message").notNull(),
    firstSeenAt: integer("first_seen_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
  },
  (t) => [index("control_findings_control_idx").on(t.controlId)],
);

/** The ticket key a ticket-reference control found for a change. */
export const controlTickets = sqliteTable(
  "control_tickets",
  {
    recordId: text("record_id").notNull(),
    controlId: text("control_id").notNull(),
    ticket: text("ticket").notNull(),
  },
  (t) => [primaryKey({ columns: [t.recordId, t.controlId] })],
);

/** One row per check run: the period it evaluated (the next check's default start). */
export const controlChecks = sqliteTable("control_checks", {
  id: integer("id").primaryKey(),
  checkedAt: integer("checked_at").notNull(),
  periodStart: integer("period_start").notNull(),
  periodEnd: integer("period_end").notNull(),
  findings: integer("findings").notNull(),
});

/** Waivers and their withdrawals, append-only, each row hash-linked to the one before (verify walks it). */
export const controlWaivers = sqliteTable(
  "control_waivers",
  {
    seq: integer("seq").primaryKey(),
    findingId: text("finding_id").notNull(),
    /** waive | unwaive */
    action: text("action").notNull(),
    reason: text("reason").notNull(),
    byName: text("by_name").notNull(),
    /** YYYY-MM-DD, the last day the waiver holds (UTC); NULL: until withdrawn. */
    expires: text("expires"),
    createdAt: integer("created_at").notNull(),
    hash: text("hash").notNull(),
    chainHash: text("chain_hash").notNull(),
  },
  (t) => [index("control_waivers_finding_idx").on(t.findingId)],
);

/** New findings to deliver, one row per sink, written in the transaction that stores the finding. */
export const controlOutbox = sqliteTable(
  "control_outbox",
  {
    findingId: text("finding_id").notNull(),
    sink: text("sink").notNull(),
    payload: text("payload").notNull(),
    createdAt: integer("created_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    deliveredAt: integer("delivered_at"),
    lastError: text("last_error"),
  },
  (t) => [primaryKey({ columns: [t.findingId, t.sink] })],
);

// Export (issue 24): how far each named consumer of `flagtrail export --cursor` has had the history.

/** Per project and consumer name: the audit_logs.seq up to which its exports are complete. */
export const exportCursors = sqliteTable(
  "export_cursors",
  {
    project: text("project").notNull(),
    name: text("name").notNull(),
    seq: integer("seq").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.project, t.name] })],
);
