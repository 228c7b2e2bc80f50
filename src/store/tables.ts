// Every table of the store, described once for both engines. src/store/schema.ts builds SQLite's
// drizzle tables from it and src/store/pg/schema.ts PostgreSQL's: they are the sources of drizzle-kit's
// migrations (drizzle/ and drizzle/pg/), and the tables are a public interface for ad hoc SQL (see
// docs/sql.md "Tables"): columns may be added, never renamed. A column's SQL name is its key in snake_case.
//
// The language it is written in (column kinds, per-engine variants, building an engine's tables) is
// src/store/tableKinds.ts. The columns stand in the order both engines' tables have them after their
// migrations, so that ad hoc SQL reads the same on both; SQLite's audit_logs alone has three more, last:
// the record and its hashes as stored (see audit_logs). test/pg/schema.test.ts compares both databases
// with this description.
import { sql } from "drizzle-orm";
import { CONTROL_TABLES } from "./controlTables.ts";
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
/** A column PostgreSQL stores and SQLite reads from the record's JSON. */
const fromRawOnSqlite = (column: Column, path: string) =>
  perEngine({ sqlite: column.generatedAs(fromRaw(path)), pg: column });

export const TABLES = {
  /**
   * One row per audit log record, first version as received. Never updated once written. On SQLite one
   * copy of the record is on disk (`raw_data`, with the store's own columns): the documented columns that
   * repeat a field of it are virtual generated columns read from it (migration 0011), in their places,
   * with their values. PostgreSQL stores every column (virtual generated columns only from 18 on).
   */
  auditLogs: table(
    "audit_logs",
    {
      id: perEngine({ sqlite: text().notNull().generatedAs(fromRaw("id")), pg: text().primaryKey() }),
      name: fromRawOnSqlite(text().notNull(), "name"),
      actionType: fromRawOnSqlite(text().notNull(), "actionType"),
      changeLog: fromRawOnSqlite(text(), "changeLog"),
      updatedBy: fromRawOnSqlite(text(), "updatedBy"),
      // Stored on SQLite too: the report reads both for every record of its period (by person, the CSVs);
      // read from raw_data its CPU grew by ~7 % (one month of a 300k-record store).
      updatedByUserId: text(),
      /** A string as sent, or the JSON text when the service sent an object. */
      modifierEmail: text(),
      /** Epoch ms UTC parsed from date_text + time_text; NULL when they could not be parsed. */
      occurredAt: epochMs(),
      /** The record's calendar day in the server's zone (YYYY-MM-DD), from its own `date` text. */
      serverDay: text(),
      dateText: fromRawOnSqlite(text().notNull(), "date"),
      timeText: fromRawOnSqlite(text().notNull(), "time"),
      /** JSON array or NULL when the record had no tags. */
      tags: fromRawOnSqlite(text(), "tags"),
      /** JSON of the record exactly as received (on SQLite `raw_data` under its documented name). */
      raw: perEngine({ sqlite: text().notNull().generatedAs(sql`raw_data`), pg: text().notNull() }),
      /** SHA-256 (hex) of the record's canonical JSON. */
      recordHash: perEngine({
        sqlite: text().notNull().generatedAs(sql`lower(hex(record_hash_bytes))`),
        pg: text().notNull(),
      }),
      /** Insertion order; the hash chain runs over it. On SQLite the rowid: the table is stored in this order. */
      seq: perEngine({ sqlite: integer().primaryKey(), pg: bigNumber().notNull() }),
      /** SHA-256 of (previous chain_hash + record_hash): tampering with any earlier row breaks it. */
      chainHash: perEngine({
        sqlite: text().notNull().generatedAs(sql`lower(hex(chain_hash_bytes))`),
        pg: text().notNull(),
      }),
      firstSeenAt: epochMs().notNull(),
      syncRunId: integer(),
      /**
       * JSON object: the record's `changes`. Both expressions give the member's text as it stands in the
       * record and SQL NULL for JSON null.
       */
      changes: text().generatedAs({
        sqlite: sql`coalesce(json_extract(raw_data, '$.changes'), '{}')`,
        pg: sql`coalesce(raw::json ->> 'changes', '{}')`,
      }),
      /**
       * SQLite: the record's text as received. Not binary JSON (JSONB, ~80 bytes a record smaller): every
       * column read from a JSONB column fails in SQLite before 3.45 (Debian 12's sqlite3, and Python's
       * there), and the store is meant to be read with any SQLite tool.
       */
      rawData: perEngine({ sqlite: text().notNull() }),
      recordHashBytes: perEngine({ sqlite: blob().notNull() }),
      chainHashBytes: perEngine({ sqlite: blob().notNull() }),
    },
    // Each index and the query that needs it (an index on a virtual column holds its values itself).
    (on) => [
      // SQLite: the writer's dedupe on id; the foreign keys of rule_changes, rule_diff_summaries,
      // listed_days… (PostgreSQL: id is the primary key).
      on.only("sqlite", on.unique("audit_logs_id_idx", "id")),
      // A period of every action type: the report's counts (reportQueries/overview.ts), export's
      // --from/--to (export/records.ts), the newest record (coverageState.ts).
      on.index("audit_logs_occurred_at_idx", "occurredAt"),
      // Records per server day: the sync's coverage counts (coverageCounts.ts), the report's completeness
      // section (reportQueries/completeness.ts).
      on.index("audit_logs_server_day_idx", "serverDay"),
      // Covers what the report reads of a category's records (views experiment_state_changes,
      // config_edits) besides the CSV columns: the unreviewed-change window and the per-entity summaries
      // then read the index alone instead of a table row per record (bench/report.ts). SQLite's has no
      // seq: every index entry ends with the rowid, which seq is, and a listed seq was a second copy
      // (migration 0012); none of the report's orders is read from this index (each is sorted).
      on.only(
        "sqlite",
        on.index("audit_logs_action_type_idx", "actionType", "occurredAt", "name", "updatedBy", "id"),
      ),
      on.only(
        "pg",
        on.index("audit_logs_action_type_idx", "actionType", "occurredAt", "seq", "name", "updatedBy", "id"),
      ),
      // One entity's records: a config's edits (entityLinks.ts), an experiment's states
      // (entityReportQueries.ts), the approval before a change (export/records.ts).
      on.index("audit_logs_name_idx", "name"),
      // PostgreSQL: seq's uniqueness (on SQLite seq is the rowid).
      on.only("pg", on.unique("audit_logs_seq_idx", "seq")),
    ],
  ),

  /** Later versions of a record whose id was already stored with other content (a mutation). */
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
      /** JSON array of zod issues. */
      issues: text().notNull(),
      requestPath: text(),
      receivedAt: epochMs().notNull(),
      syncRunId: integer(),
      /** The record's server day from its raw `date` text when that parses (for coverage), else NULL. */
      serverDay: text(),
      /**
       * The narrowest startDate..endDate of a request that returned it: when its own date is unreadable,
       * coverage counts it for any range holding these bounds (and a narrower re-read narrows them).
       */
      dayMin: text(),
      dayMax: text(),
    },
    (on) => [on.unique("quarantine_raw_hash_idx", "rawHash")],
  ),

  /** One row per `flagtrail sync` (and per daemon cycle). */
  syncRuns: table(
    "sync_runs",
    {
      id: serial(),
      startedAt: epochMs().notNull(),
      finishedAt: epochMs(),
      /** running | ok | failed | interrupted */
      outcome: text().notNull().default("running"),
      /** Identifies the filter set (action types) whose checkpoint the run advances. */
      filterKey: text().notNull(),
      /** JSON of the run's parameters (range, action types, page size…). Never holds the key. */
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

  /** Per server day: how many records the server says exist and how many the store holds. */
  coverage: table(
    "coverage",
    {
      filterKey: text().notNull(),
      day: text().notNull(),
      serverTotal: integer().notNull(),
      localCount: integer().notNull(),
      checkedAt: epochMs().notNull(),
      syncRunId: integer(),
      /** 1 when the server's day had ended when it was checked; 0 = still open, re-checked next sync. */
      dayClosed: integer().notNull().default(0),
      /** How many of local_count are in quarantine (stored, but failed validation). */
      quarantinedCount: integer().notNull().default(0),
    },
    (on) => [on.primaryKey("filterKey", "day")],
  ),

  /**
   * Leases: one sync and one daemon per database. A lease past expires_at is free to take. On
   * PostgreSQL the lease itself is a session-level advisory lock (src/store/pg/leaseLocks.ts): the row
   * only says who took it, and since when.
   */
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
      /** added | removed | modified | moved */
      change: text().notNull(),
      /** Field path for `modified` rows, e.g. percentagePass, condition[1].value, returnValueJSON $.color */
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

  /** The one-line human summary of a record's rule diff; its presence marks the record as diffed. */
  ruleDiffSummaries: table("rule_diff_summaries", {
    auditLogId: text().primaryKey().references("auditLogs", "id"),
    summary: text().notNull(),
    /** Bumped when the diff code changes, so that stored diffs are recomputed. */
    diffVersion: integer().notNull(),
  }),

  /**
   * The server day a single-day request listed a record under, when that differs from the day of its
   * own `date` text (a server that writes some texts in another zone than the one it files days in).
   * Coverage counts such a record on the day the server lists it under, so that a gap report means a
   * missing record.
   */
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

  // Entity history (issue 10) and controls and export (issues 23, 24), each in a file of its own.
  ...ENTITY_TABLES,
  ...CONTROL_TABLES,
};
