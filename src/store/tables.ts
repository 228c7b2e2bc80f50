// Every table of the store, once for both engines (tableKinds.ts); schema.ts and pg/schema.ts build the
// drizzle tables from it. Public for ad hoc SQL (docs/sql.md documents them): columns may be added, never
// renamed; SQL names are the keys in snake_case, in the migrated tables' order (test/pg/schema.test.ts).
import { type SQL, sql } from "drizzle-orm";
import { CONTROL_TABLES } from "./controls/tables.ts";
import { ENTITY_TABLES } from "./entityTables.ts";
import {
  bigNumber,
  blob,
  type Column,
  epochMs,
  integer,
  perEngine,
  serial,
  table,
  text,
} from "./tableKinds.ts";

/** Each table's column keys, for typing the tables built from TABLES. */
export type ColumnKeys = { [T in keyof typeof TABLES]: keyof (typeof TABLES)[T]["columns"] & string };

/** A field of the record, read from its stored JSON on SQLite (`raw_data`, see audit_logs). */
const fromRaw = (path: string) => sql.raw(`json_extract(raw_data, '$.${path}')`);
/** A column PostgreSQL stores and SQLite computes (virtual) from `expression`. */
const computedOnSqlite = (column: Column, expression: SQL) =>
  perEngine({ sqlite: column.generatedAs(expression), pg: column });
const fromRawOnSqlite = (column: Column, path: string) => computedOnSqlite(column, fromRaw(path));

export const TABLES = {
  /** One row per record, first version as received, never updated. */
  auditLogs: table(
    "audit_logs",
    {
      id: perEngine({ sqlite: text().notNull().generatedAs(fromRaw("id")), pg: text().primaryKey() }),
      name: fromRawOnSqlite(text().notNull(), "name"),
      actionType: fromRawOnSqlite(text().notNull(), "actionType"),
      changeLog: fromRawOnSqlite(text(), "changeLog"),
      updatedBy: fromRawOnSqlite(text(), "updatedBy"),
      updatedByUserId: fromRawOnSqlite(text(), "updatedByUserID"),
      // A string as sent; an object as its JSON text (SQLite's: the record's own text without blanks).
      modifierEmail: fromRawOnSqlite(text(), "modifierEmail"),
      occurredAt: epochMs(),
      serverDay: text(),
      dateText: fromRawOnSqlite(text().notNull(), "date"),
      timeText: fromRawOnSqlite(text().notNull(), "time"),
      tags: fromRawOnSqlite(text(), "tags"),
      raw: computedOnSqlite(text().notNull(), sql`raw_data`),
      recordHash: computedOnSqlite(text().notNull(), sql`lower(hex(record_hash_bytes))`),
      seq: perEngine({ sqlite: integer().primaryKey(), pg: bigNumber().notNull() }),
      chainHash: computedOnSqlite(text().notNull(), sql`lower(hex(chain_hash_bytes))`),
      firstSeenAt: epochMs().notNull(),
      syncRunId: integer(),
      /** Both expressions give the member's text as in the record, and SQL NULL for JSON null. */
      changes: text().generatedAs({
        sqlite: sql`coalesce(json_extract(raw_data, '$.changes'), '{}')`,
        pg: sql`coalesce(raw::json ->> 'changes', '{}')`,
      }),
      // Text, not JSONB (~80 bytes a record smaller): SQLite before 3.45 (Debian 12's sqlite3, Python's)
      // cannot read JSONB, and the store is meant to be read with any SQLite tool.
      rawData: perEngine({ sqlite: text().notNull() }),
      recordHashBytes: perEngine({ sqlite: blob().notNull() }),
      chainHashBytes: perEngine({ sqlite: blob().notNull() }),
    },
    // Each index and the queries that need it (an index on a virtual column holds its values itself).
    (on) => [
      // SQLite: the writer's dedupe on id, the foreign keys to it (PostgreSQL: id is the primary key).
      on.only("sqlite", on.unique("audit_logs_id_idx", "id")),
      // A period of every action type: the report's counts, export's --from/--to, the newest record.
      on.index("audit_logs_occurred_at_idx", "occurredAt"),
      // Records per server day: the sync's coverage counts, the report's completeness section.
      on.index("audit_logs_server_day_idx", "serverDay"),
      // What the report reads of a category's records but the CSV columns (unreviewed window, per-entity
      // summaries: index only). SQLite's has no seq: entries end with the rowid, seq (0012); queries sort.
      on.only(
        "sqlite",
        on.index("audit_logs_action_type_idx", "actionType", "occurredAt", "name", "updatedBy", "id"),
      ),
      on.only(
        "pg",
        on.index("audit_logs_action_type_idx", "actionType", "occurredAt", "seq", "name", "updatedBy", "id"),
      ),
      // One entity's records: a config's edits, an experiment's states, the approval before a change.
      on.index("audit_logs_name_idx", "name"),
      // PostgreSQL: seq's uniqueness (on SQLite seq is the rowid).
      on.only("pg", on.unique("audit_logs_seq_idx", "seq")),
    ],
  ),

  auditLogRevisions: table(
    "audit_log_revisions",
    {
      id: serial(),
      auditLogId: text().notNull(),
      raw: text().notNull(),
      recordHash: text().notNull(),
      seenAt: epochMs().notNull(),
      syncRunId: integer(),
    },
    (on) => [on.unique("audit_log_revisions_id_hash_idx", "auditLogId", "recordHash")],
  ),

  /** Records that failed validation: kept whole, with every zod issue, never dropped. */
  quarantine: table(
    "quarantine",
    {
      id: serial(),
      /** The record's id when it had a usable one. */
      recordId: text(),
      raw: text().notNull(),
      rawHash: text().notNull(),
      issues: text().notNull(),
      requestPath: text(),
      receivedAt: epochMs().notNull(),
      syncRunId: integer(),
      serverDay: text(),
      /** The narrowest startDate..endDate of a request that returned it (docs/sync.md, Coverage). */
      dayMin: text(),
      dayMax: text(),
    },
    (on) => [on.unique("quarantine_raw_hash_idx", "rawHash")],
  ),

  syncRuns: table(
    "sync_runs",
    {
      id: serial(),
      startedAt: epochMs().notNull(),
      finishedAt: epochMs(),
      outcome: text().notNull().default("running"),
      filterKey: text().notNull(),
      params: text().notNull(),
      fetched: integer().notNull().default(0),
      inserted: integer().notNull().default(0),
      duplicates: integer().notNull().default(0),
      mutations: integer().notNull().default(0),
      quarantined: integer().notNull().default(0),
      warnings: integer().notNull().default(0),
      requests: integer().notNull().default(0),
      throttled: integer().notNull().default(0),
      error: text(),
      pid: integer(),
      /** Requests sent again after a failed attempt (5xx, 429, reset, truncated body). */
      retries: integer().notNull().default(0),
    },
    (on) => [on.index("sync_runs_started_at_idx", "startedAt")],
  ),

  /** Newest record id seen per filter set: sent as latestID on the next incremental run. */
  checkpoints: table("checkpoints", {
    filterKey: text().primaryKey(),
    latestId: text().notNull(),
    latestOccurredAt: epochMs(),
    updatedAt: epochMs().notNull(),
    syncRunId: integer(),
  }),

  /** Progress through the date windows of a range, so that a killed run resumes where it stopped. */
  syncWindows: table(
    "sync_windows",
    {
      filterKey: text().notNull(),
      startDate: text().notNull(),
      endDate: text().notNull(),
      /** pending | done */
      status: text().notNull().default("pending"),
      /** Next page to request (1-based) while pending. */
      nextPage: integer().notNull().default(1),
      updatedAt: epochMs().notNull(),
      syncRunId: integer(),
    },
    (on) => [on.primaryKey("filterKey", "startDate", "endDate")],
  ),

  coverage: table(
    "coverage",
    {
      filterKey: text().notNull(),
      day: text().notNull(),
      serverTotal: integer().notNull(),
      localCount: integer().notNull(),
      checkedAt: epochMs().notNull(),
      syncRunId: integer(),
      dayClosed: integer().notNull().default(0),
      quarantinedCount: integer().notNull().default(0),
    },
    (on) => [on.primaryKey("filterKey", "day")],
  ),

  /** One sync and one daemon per database (on PostgreSQL the row only says who holds the lock: leases.ts). */
  leases: table("leases", {
    name: text().primaryKey(),
    holder: text().notNull(),
    pid: integer().notNull(),
    acquiredAt: epochMs().notNull(),
    expiresAt: epochMs().notNull(),
  }),

  /** One row per changed rule field, derived from changes.rules.old → new. */
  ruleChanges: table(
    "rule_changes",
    {
      id: serial(),
      auditLogId: text().notNull().references("auditLogs", "id"),
      ruleId: text().notNull(),
      ruleName: text(),
      change: text().notNull(),
      field: text(),
      oldValue: text(),
      newValue: text(),
      oldPosition: integer(),
      newPosition: integer(),
    },
    (on) => [
      // A record's rule changes: the report's config edits and summaries, export, verify.
      on.index("rule_changes_audit_log_id_idx", "auditLogId"),
      // No query looks rule changes up by rule: SQLite's went in migration 0012 (PostgreSQL keeps its own).
      on.only("pg", on.index("rule_changes_rule_id_idx", "ruleId")),
    ],
  ),

  /** The one-line human summary of a record's rule diff; its presence marks the record as diffed. SQLite:
   * WITHOUT ROWID (0015), the key's b-tree is the table. */
  ruleDiffSummaries: table("rule_diff_summaries", {
    auditLogId: text().primaryKey().references("auditLogs", "id"),
    summary: text().notNull(),
    /** Bumped when the diff code changes, so that stored diffs are recomputed. */
    diffVersion: integer().notNull(),
  }),

  /** The day a single-day read listed a record under when its own date says another (docs/sync.md). */
  listedDays: table("listed_days", {
    auditLogId: text().primaryKey().references("auditLogs", "id"),
    day: text().notNull(),
  }),

  /** Category of each action type (experiment_state | config_edit | …), written from code at open. */
  actionTypeCategories: table("action_type_categories", {
    actionType: text().primaryKey(),
    category: text().notNull(),
  }),

  /** Store-level facts: hash chain head, server time zone seen, schema notes. */
  meta: table("meta", {
    key: text().primaryKey(),
    value: text().notNull(),
    /** Whole seconds × 1000. */
    updatedAt: epochMs().notNull().default({
      sqlite: sql`(unixepoch() * 1000)`,
      pg: sql`(floor(extract(epoch from now())) * 1000)::bigint`,
    }),
  }),

  ...ENTITY_TABLES,
  ...CONTROL_TABLES,

  exportCursors: table(
    "export_cursors",
    {
      project: text().notNull(),
      name: text().notNull(),
      seq: bigNumber().notNull(),
      updatedAt: epochMs().notNull(),
    },
    (on) => [on.primaryKey("project", "name")],
  ),
};
