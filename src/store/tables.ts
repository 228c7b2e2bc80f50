// Every table of the store, described once for both engines. src/store/schema.ts builds SQLite's
// drizzle tables from it and src/store/pg/schema.ts PostgreSQL's: they are the sources of drizzle-kit's
// migrations (drizzle/ and drizzle/pg/), and the tables are a public interface for ad hoc SQL (see
// docs/sql.md "Tables"): columns may be added, never renamed. A column's SQL name is its key in snake_case.
//
// The column kinds carry what differs between the engines, so that a value reads back the same on both:
// - text: every string, raw JSON too (its exact bytes are hashed, which jsonb would reorder and respace);
// - integer: counts and flags (0/1 as on SQLite, not boolean);
// - epochMs / bigNumber: epoch milliseconds and sequence numbers, past int4's range on PostgreSQL
//   (bigint, read as a JS number: well within its exact integers); SQLite's integer holds 64 bits;
// - serial: an integer primary key the engine numbers (AUTOINCREMENT / an identity column).
// The columns stand in the order both engines' tables have them after their migrations, so that ad hoc SQL
// reads the same on both; SQLite's audit_logs alone has three more, last: the record and its hashes as
// stored (see audit_logs). test/pg/schema.test.ts compares both databases with this description.
import { type SQL, sql } from "drizzle-orm";

type Kind = "text" | "integer" | "epochMs" | "bigNumber" | "serial" | "blob";
type Engine = keyof PerEngine;
/** An expression written for each engine (a default, a generated column). */
export interface PerEngine {
  sqlite: SQL;
  pg: SQL;
}

interface ColumnOptions {
  notNull?: true;
  primaryKey?: true;
  default?: string | number | PerEngine;
  /** [table key in TABLES, column key]. */
  references?: readonly [string, string];
  /** A column computed from others: VIRTUAL on SQLite, STORED on PostgreSQL (virtual only from 18 on). */
  generated?: SQL | PerEngine;
  /** Where the engines' columns differ: each engine's own (an engine left out has no such column). */
  variants?: Partial<Record<Engine, Column>>;
}

/** One column, as a small immutable builder: `text().notNull()`. */
export class Column {
  constructor(
    readonly kind: Kind,
    readonly options: ColumnOptions = {},
  ) {}
  private with(options: ColumnOptions): Column {
    return new Column(this.kind, { ...this.options, ...options });
  }
  notNull(): Column {
    return this.with({ notNull: true });
  }
  primaryKey(): Column {
    return this.with({ primaryKey: true });
  }
  default(value: string | number | PerEngine): Column {
    return this.with({ default: value });
  }
  /** `table`: a key of TABLES, defined above this one. */
  references(table: string, column: string): Column {
    return this.with({ references: [table, column] });
  }
  generatedAs(expression: SQL | PerEngine): Column {
    return this.with({ generated: expression });
  }
  /** This column as `engine` has it; undefined when that engine has no such column. */
  on(engine: Engine): Column | undefined {
    const variants = this.options.variants;
    return variants === undefined ? this : variants[engine];
  }
}

/** A column each engine has in its own way (or only one of them has: the other left out). */
const perEngine = (variants: Partial<Record<Engine, Column>>) => new Column("text", { variants });

const text = () => new Column("text");
const integer = () => new Column("integer");
const epochMs = () => new Column("epochMs");
const bigNumber = () => new Column("bigNumber");
const serial = () => new Column("serial");
const blob = () => new Column("blob");

/** An index or a composite primary key, over column keys; `engine`: only that engine has it. */
type Constraint = (
  | { kind: "index" | "unique"; name: string; columns: string[] }
  | { kind: "primaryKey"; columns: string[] }
) & { engine?: Engine };

export interface TableSpec<C extends Record<string, Column> = Record<string, Column>> {
  name: string;
  columns: C;
  constraints: Constraint[];
}

/** Each table's column keys, for typing the tables built from TABLES. */
export type ColumnKeys = { [T in keyof typeof TABLES]: keyof (typeof TABLES)[T]["columns"] & string };

function table<C extends Record<string, Column>>(
  name: string,
  columns: C,
  constraints: (on: {
    index(name: string, ...columns: (keyof C & string)[]): Constraint;
    unique(name: string, ...columns: (keyof C & string)[]): Constraint;
    primaryKey(...columns: (keyof C & string)[]): Constraint;
    only(engine: Engine, constraint: Constraint): Constraint;
  }) => Constraint[] = () => [],
): TableSpec<C> {
  return {
    name,
    columns,
    constraints: constraints({
      index: (index, ...on) => ({ kind: "index", name: index, columns: on }),
      unique: (index, ...on) => ({ kind: "unique", name: index, columns: on }),
      primaryKey: (...on) => ({ kind: "primaryKey", columns: on }),
      only: (engine, constraint) => ({ ...constraint, engine }),
    }),
  };
}

/** A field of the record, read from its stored JSON on SQLite (`raw_data`, see audit_logs). */
const fromRaw = (path: string) => sql.raw(`json_extract(raw_data, '$.${path}')`);
/** A column PostgreSQL stores and SQLite reads from the record's JSON. */
const fromRawOnSqlite = (column: Column, path: string) =>
  perEngine({ sqlite: column.generatedAs(fromRaw(path)), pg: column });

/** `updatedByUserId` → `updated_by_user_id`. */
export function columnName(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** The same four columns end every content row of the entity history and its hash chain. */
const entityChained = {
  raw: text().notNull(),
  recordHash: text().notNull(),
  entitySeq: bigNumber().notNull(),
  entityChainHash: text().notNull(),
};

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
      // then read the index alone instead of a table row per record (bench/report.ts).
      on.index("audit_logs_action_type_idx", "actionType", "occurredAt", "seq", "name", "updatedBy", "id"),
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
      on.index("rule_changes_audit_log_id_idx", "auditLogId"),
      on.index("rule_changes_rule_id_idx", "ruleId"),
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

  // Entity history (issue 10): what the console's other reads say about the entities the audit log
  // names. Content rows are append-only and linked in one hash chain of their own (entity_seq,
  // entity_chain_hash across config_versions, config_version_revisions, experiment_snapshots and
  // metric_snapshots, in entity_seq order), which `verify` walks like the record chain.

  /** One row per (config, version) as first received. Never updated. */
  configVersions: table(
    "config_versions",
    {
      id: serial(),
      /** The config as the audit log names it (its `name`), which is also the id the request used. */
      configKey: text().notNull(),
      /** The record's own `id`. */
      configId: text().notNull(),
      version: integer().notNull(),
      /** Epoch ms of the version (`lastModifiedTime`). */
      lastModifiedTime: epochMs().notNull(),
      lastModifierId: text(),
      lastModifierName: text(),
      /** raw: the version record exactly as received; record_hash: as audit_logs.record_hash. */
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
      /** Items that failed their schema (their count; the read's raw items are not kept). */
      invalid: integer().notNull().default(0),
      /** audit_logs.seq of the newest record stored when the read was made: what it has caught up with. */
      auditSeq: bigNumber().notNull(),
      fetchedAt: epochMs().notNull(),
      syncRunId: integer(),
    },
    (on) => [on.index("entity_fetches_key_idx", "kind", "entityKey", "auditSeq")],
  ),

  /**
   * The entity backlog: entities due for a read that the last entity pass left to later runs (its
   * request budget was spent). Rewritten by every entity pass; the due-lists stay the truth of what is due.
   */
  entityBacklog: table(
    "entity_backlog",
    {
      kind: text().notNull(),
      entityKey: text().notNull(),
      /** audit_logs.seq of the newest record naming it: the budget reads the most recent first. */
      newestSeq: bigNumber().notNull(),
      /** When a pass first left it unread (epoch ms); kept while it stays pending. */
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
      /** added | removed | changed (rules: added | removed | modified | moved) */
      change: text().notNull(),
      /** JSON text of the values. */
      oldValue: text(),
      newValue: text(),
    },
    (on) => [on.index("config_version_changes_idx", "configKey", "version")],
  ),

  // Controls (issue 23): what `flagtrail check` found, the waivers given, and the alerts still to deliver.

  /** One row per finding (control id + record or evidence key): first and last seen by a check. */
  controlFindings: table(
    "control_findings",
    {
      id: text().primaryKey(),
      controlId: text().notNull(),
      kind: text().notNull(),
      severity: text().notNull(),
      recordId: text(),
      entity: text(),
      actionType: text(),
      occurredAt: epochMs(),
      actor: text(),
      message: text().notNull(),
      firstSeenAt: epochMs().notNull(),
      lastSeenAt: epochMs().notNull(),
    },
    (on) => [on.index("control_findings_control_idx", "controlId")],
  ),

  /** The ticket key a ticket-reference control found for a change. */
  controlTickets: table(
    "control_tickets",
    {
      recordId: text().notNull(),
      controlId: text().notNull(),
      ticket: text().notNull(),
    },
    (on) => [on.primaryKey("recordId", "controlId")],
  ),

  /** One row per check run: the period it evaluated (the next check's default start). */
  controlChecks: table("control_checks", {
    id: bigNumber().primaryKey(),
    checkedAt: epochMs().notNull(),
    periodStart: epochMs().notNull(),
    periodEnd: epochMs().notNull(),
    findings: integer().notNull(),
  }),

  /** Waivers and their withdrawals, append-only, each row hash-linked to the one before (verify walks it). */
  controlWaivers: table(
    "control_waivers",
    {
      seq: bigNumber().primaryKey(),
      findingId: text().notNull(),
      /** waive | unwaive */
      action: text().notNull(),
      reason: text().notNull(),
      byName: text().notNull(),
      /** YYYY-MM-DD, the last day the waiver holds (UTC); NULL: until withdrawn. */
      expires: text(),
      createdAt: epochMs().notNull(),
      hash: text().notNull(),
      chainHash: text().notNull(),
    },
    (on) => [on.index("control_waivers_finding_idx", "findingId")],
  ),

  /** New findings to deliver, one row per sink, written in the transaction that stores the finding. */
  controlOutbox: table(
    "control_outbox",
    {
      findingId: text().notNull(),
      sink: text().notNull(),
      payload: text().notNull(),
      createdAt: epochMs().notNull(),
      attempts: integer().notNull().default(0),
      nextAttemptAt: epochMs().notNull(),
      deliveredAt: epochMs(),
      lastError: text(),
    },
    (on) => [on.primaryKey("findingId", "sink")],
  ),

  // Export (issue 24): how far each named consumer of `flagtrail export --cursor` has had the history.

  /** Per project and consumer name: the audit_logs.seq up to which its exports are complete. */
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

/**
 * What buildTables needs of an engine's drizzle builders. Each kind's builder has its own generic type,
 * so the values pass through as unknown and each schema file types its tables (loosely) itself.
 */
export interface Dialect {
  engine: Engine;
  /** The builder of a column of this kind (a serial one already its table's numbered primary key). */
  column(kind: Kind, name: string): unknown;
  generated(builder: unknown, expression: SQL): unknown;
  table(
    name: string,
    columns: Record<string, unknown>,
    extras: (t: Record<string, unknown>) => unknown[],
  ): unknown;
  index(name: string, unique: boolean, columns: unknown[]): unknown;
  primaryKey(columns: unknown[]): unknown;
}

/** The builder methods both engines share under the same names. */
interface Builder {
  primaryKey(): Builder;
  notNull(): Builder;
  default(value: unknown): Builder;
  references(target: () => unknown): Builder;
}

/** A table's columns as `engine` has them, in order. */
export function columnsOn(spec: TableSpec, engine: Engine): [string, Column][] {
  return Object.entries(spec.columns).flatMap(([key, column]) => {
    const own = column.on(engine);
    return own === undefined ? [] : [[key, own] as [string, Column]];
  });
}

/** An expression for `engine`: one written for both, or its own of two. */
function expressionOn(expression: SQL | PerEngine, engine: Engine): SQL {
  return "sqlite" in expression && "pg" in expression ? expression[engine] : (expression as SQL);
}

function buildColumn(dialect: Dialect, key: string, spec: Column, built: Record<string, unknown>): unknown {
  const { options } = spec;
  const name = columnName(key);
  let c = dialect.column(spec.kind, name) as Builder;
  if (options.primaryKey) c = c.primaryKey();
  if (options.notNull) c = c.notNull();
  const fallback = options.default;
  if (fallback !== undefined)
    c = c.default(typeof fallback === "object" ? expressionOn(fallback, dialect.engine) : fallback);
  if (options.generated) c = dialect.generated(c, expressionOn(options.generated, dialect.engine)) as Builder;
  const references = options.references;
  if (references) {
    const [tableKey, columnKey] = references;
    const target = (built[tableKey] as Record<string, unknown> | undefined)?.[columnKey];
    if (target === undefined)
      throw new Error(`schema: ${tableKey}.${columnKey} is not defined above ${name}`);
    c = c.references(() => target);
  }
  return c;
}

/** Every table of TABLES built with one engine's drizzle builders, by key. */
export function buildTables(dialect: Dialect): Record<keyof typeof TABLES, unknown> {
  const built: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(TABLES) as [string, TableSpec][]) {
    const columns: Record<string, unknown> = {};
    for (const [columnKey, c] of columnsOn(spec, dialect.engine)) {
      columns[columnKey] = buildColumn(dialect, columnKey, c, built);
    }
    const constraints = spec.constraints.filter((c) => (c.engine ?? dialect.engine) === dialect.engine);
    built[key] = dialect.table(spec.name, columns, (t) =>
      constraints.map((c) => {
        const on = c.columns.map((columnKey) => t[columnKey]);
        return c.kind === "primaryKey"
          ? dialect.primaryKey(on)
          : dialect.index(c.name, c.kind === "unique", on);
      }),
    );
  }
  return built as Record<keyof typeof TABLES, unknown>;
}
