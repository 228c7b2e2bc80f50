// The report's reads, for SQLite. The analytical queries stay SQL text because the compliance Markdown
// prints each one under its section, with its parameters as `--param name=value`, so a reader can
// re-run it with `flagtrail sql`. A PostgreSQL engine puts its own dialect's text and the same exported
// functions in reportQueries.pg.ts beside this file.
//
// Everything the report calls is async (a Promise, or an AsyncIterable of row batches) because a
// PostgreSQL driver is; better-sqlite3 stays synchronous inside. Long results come in batches, not row
// by row: one-row batches cost the one-month 1M-record report ~30% more CPU than 512-row ones (bench).
// On PostgreSQL the same queries, in that dialect, are in src/store/pg/reportQueries.ts (same names, same
// parameters, same rows in the same order); readReportSnapshot picks by the store's engine, and the
// snapshot hands the Markdown the text of its own dialect, so a printed query re-runs on its store.
//
// Parameters (bound from ReportParams by bindParams): @start/@end epoch-ms bounds ([start, end)), @types
// JSON array of action types or NULL for all, @serverFromDay/@serverToDay the server days the period
// overlaps, @days/@rejects/@exempt/@flows JSON lists built from code (src/report/reviews.ts),
// @reviewWindow the review validity in ms and @reviewStart = @start - @reviewWindow.
import type Database from "better-sqlite3";
import { sqliteOf } from "./connection.ts";
import { ENTITY_REPORT_QUERIES, type EntityReportRows } from "./entityReportQueries.ts";
import type { AnyStore } from "./openAny.ts";
import { readPgReportSnapshot } from "./pg/reportQueries.ts";

const TYPES = "(@types IS NULL OR %.action_type IN (SELECT value FROM json_each(@types)))";
const PERIOD = "%.occurred_at >= @start AND %.occurred_at < @end";

function scoped(alias: string, text: string): string {
  return text.replaceAll("%", alias);
}

function period(alias: string): string {
  return `${scoped(alias, PERIOD)}\n  AND ${scoped(alias, TYPES)}`;
}

function csvQuery(view: string): string {
  return `SELECT v.occurred_at, v.id, v.updated_by, v.updated_by_user_id, v.modifier_email, v.name,
       v.action_type, v.change_log, v.rule_diff_summary
FROM ${view} v
WHERE ${period("v")}
ORDER BY v.occurred_at, v.seq`;
}

function entitySummary(view: string, ruleChanges: boolean): string {
  const join = ruleChanges ? "\nLEFT JOIN rule_changes rc ON rc.audit_log_id = v.id" : "";
  return `SELECT v.name, v.updated_by, v.action_type, count(DISTINCT v.id) AS changes,
       ${ruleChanges ? "count(rc.id)" : "0"} AS rule_changes, min(v.occurred_at) AS first_at,
       max(v.occurred_at) AS last_at
FROM ${view} v${join}
WHERE ${period("v")}
GROUP BY v.name, v.updated_by, v.action_type
ORDER BY v.name, v.updated_by, v.action_type`;
}

const UNREVIEWED = `WITH events AS (
  SELECT 'experiment' AS kind, e.name, e.occurred_at, e.seq, e.id, e.action_type, e.category, e.updated_by,
         0 AS is_approval
  FROM experiment_state_changes e
  WHERE e.occurred_at >= @reviewStart AND e.occurred_at < @end
    AND e.action_type NOT IN (SELECT value FROM json_each(@exempt))
  UNION ALL
  SELECT 'config', c.name, c.occurred_at, c.seq, c.id, c.action_type, c.category, c.updated_by, 0
  FROM config_edits c
  WHERE c.occurred_at >= @reviewStart AND c.occurred_at < @end
    AND c.action_type NOT IN (SELECT value FROM json_each(@exempt))
  UNION ALL
  SELECT json_extract(f.value, '$.entity'), a.name, a.occurred_at, a.seq, a.id, a.action_type, NULL,
         a.updated_by, 1
  FROM json_each(@flows) f
  JOIN audit_logs a ON a.action_type = json_extract(f.value, '$.accept')
  WHERE json_extract(f.value, '$.entity') IN ('experiment', 'config')
    AND a.occurred_at >= @reviewStart AND a.occurred_at < @end
),
ordered AS (
  SELECT *, lag(is_approval) OVER w AS after_approval, lag(occurred_at) OVER w AS previous_at
  FROM events
  WINDOW w AS (PARTITION BY kind, name ORDER BY occurred_at, is_approval DESC, seq)
)
SELECT ch.occurred_at, ch.name, ch.action_type, ch.category, ch.updated_by, ch.id
FROM ordered ch
WHERE ch.is_approval = 0
  AND ${period("ch")}
  AND NOT (coalesce(ch.after_approval, 0) = 1 AND ch.previous_at >= ch.occurred_at - @reviewWindow)
ORDER BY ch.occurred_at, ch.seq`;

export const QUERIES = {
  experimentStateChangesCsv: csvQuery("experiment_state_changes"),
  configEditsCsv: csvQuery("config_edits"),

  recordCount: `SELECT count(*) AS records
FROM audit_logs a
WHERE ${period("a")}`,

  unplaced: "SELECT count(*) AS records FROM audit_logs WHERE occurred_at IS NULL",

  // Coverage is kept per server day (the API's calendar day in the server's zone). The local count is
  // recounted in this snapshot exactly as the sync counts (store/coverageCounts.ts): stored records on
  // the day the server lists them under, quarantined ones on their date's day or the one day a request
  // placed them in, rather than trusted from sync time. A filter key is "all" or "types:" + comma-separated action types.
  coverage: `WITH cov AS (
  SELECT c.*,
         CASE WHEN c.filter_key = 'all' THEN NULL
              ELSE '["' || replace(substr(c.filter_key, 7), ',', '","') || '"]' END AS types_json
  FROM coverage c
  WHERE c.day >= @serverFromDay AND c.day <= @serverToDay
)
SELECT c.day, c.filter_key, c.server_total, c.local_count AS local_count_at_sync, c.day_closed, c.checked_at,
       (SELECT count(*) FROM audit_logs a
        WHERE a.server_day = c.day AND a.id NOT IN (SELECT audit_log_id FROM listed_days)
          AND (c.types_json IS NULL OR a.action_type IN (SELECT value FROM json_each(c.types_json))))
       + (SELECT count(*) FROM listed_days l JOIN audit_logs a ON a.id = l.audit_log_id
          WHERE l.day = c.day
            AND (c.types_json IS NULL OR a.action_type IN (SELECT value FROM json_each(c.types_json))))
       + (SELECT count(DISTINCT coalesce(q.record_id, q.raw_hash)) FROM quarantine q
          WHERE coalesce(q.server_day, CASE WHEN q.day_min = q.day_max THEN q.day_min END) = c.day
            AND (q.record_id IS NULL OR q.record_id NOT IN (SELECT id FROM audit_logs))
            AND (c.types_json IS NULL
                 OR json_extract(q.raw, '$.actionType') IN (SELECT value FROM json_each(c.types_json))))
         AS local_count
FROM cov c
ORDER BY c.day, c.filter_key`,

  byActionType: `SELECT a.action_type, coalesce(c.category, 'uncategorised') AS category, count(*) AS records
FROM audit_logs a
LEFT JOIN action_type_categories c ON c.action_type = a.action_type
WHERE ${period("a")}
GROUP BY a.action_type
ORDER BY records DESC, a.action_type`,

  byPerson: `SELECT a.updated_by_user_id, max(a.updated_by) AS updated_by, max(a.modifier_email) AS email,
       count(*) AS records
FROM audit_logs a
WHERE ${period("a")}
GROUP BY a.updated_by_user_id, CASE WHEN a.updated_by_user_id IS NULL THEN a.updated_by END
ORDER BY records DESC, updated_by`,

  daily: `WITH days AS (
  SELECT json_extract(value, '$.day') AS day, json_extract(value, '$.start') AS day_start,
         json_extract(value, '$.end') AS day_end
  FROM json_each(@days)
)
SELECT d.day, count(a.id) AS records
FROM days d
LEFT JOIN audit_logs a ON a.occurred_at >= d.day_start AND a.occurred_at < d.day_end
  AND ${scoped("a", TYPES)}
GROUP BY d.day
ORDER BY d.day`,

  // The executive summary's counts: distinct entity names of the period.
  entityCount: `SELECT count(DISTINCT a.name) AS records
FROM audit_logs a
WHERE ${period("a")}`,

  // The descriptive lists, summarised per entity (the full rows are in the CSVs): one row per entity,
  // person and action type, folded per entity by the report.
  experimentSummary: entitySummary("experiment_state_changes", false),
  configSummary: entitySummary("config_edits", true),

  experimentTimelines: `SELECT v.name, v.occurred_at, v.action_type, v.updated_by, v.change_log, v.id
FROM experiment_state_changes v
WHERE ${period("v")}
ORDER BY v.name, v.occurred_at, v.seq`,

  configEdits: `SELECT v.name, v.occurred_at, v.id, v.action_type, v.updated_by, v.change_log, v.rule_diff_summary,
       rc.rule_id, rc.rule_name, rc.change, rc.field, rc.old_value, rc.new_value, rc.old_position,
       rc.new_position
FROM config_edits v
LEFT JOIN rule_changes rc ON rc.audit_log_id = v.id
WHERE ${period("v")}
ORDER BY v.name, v.occurred_at, v.seq, rc.id`,

  // An approval covers the next non-exempt change of its own kind of entity (experiment_review_accept →
  // experiment state changes, config_review_accept → config edits) and name, if that change comes within
  // @reviewWindow; any later change needs another approval. One window pass over the changes and
  // approvals since @reviewStart: each change looks at the event just before it.
  unreviewed: UNREVIEWED,

  // How many rows the unreviewed list above has, for the summary that comes before it.
  unreviewedCount: `SELECT count(*) AS records FROM (\n${UNREVIEWED}\n)`,

  // The same changes as full rows, for their own CSV (the columns of the other two CSVs).
  unreviewedCsv: `WITH unreviewed AS (
${UNREVIEWED}
)
SELECT a.occurred_at, a.id, a.updated_by, a.updated_by_user_id, a.modifier_email, a.name, a.action_type,
       a.change_log, s.summary AS rule_diff_summary
FROM unreviewed u
JOIN audit_logs a ON a.id = u.id
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
ORDER BY a.occurred_at, a.seq`,

  // The same changes per entity, person and action type, when they are too many to list.
  unreviewedSummary: `WITH unreviewed AS (
${UNREVIEWED}
)
SELECT u.name, u.updated_by, u.action_type, count(*) AS changes, 0 AS rule_changes,
       min(u.occurred_at) AS first_at, max(u.occurred_at) AS last_at
FROM unreviewed u
GROUP BY u.name, u.updated_by, u.action_type
ORDER BY u.name, u.updated_by, u.action_type`,

  // Every review record of the window, per flow and entity in time order (a request sorts first within
  // its second). The report pairs each approval with its request in code (src/report/reviewPairing.ts):
  // by the review id in the change logs, else the latest still-open request.
  reviewRecords: `WITH flows AS (
  SELECT json_extract(value, '$.entity') AS entity, json_extract(value, '$.create') AS create_type,
         json_extract(value, '$.accept') AS accept_type, json_extract(value, '$.reject') AS reject_type,
         json_extract(value, '$.delete') AS delete_type
  FROM json_each(@flows)
)
SELECT a.seq, a.id, a.occurred_at, a.name, f.entity,
       CASE a.action_type WHEN f.create_type THEN 'request' WHEN f.accept_type THEN 'accept' ELSE 'close' END
         AS role,
       a.action_type, a.change_log, a.updated_by, a.updated_by_user_id
FROM flows f
JOIN audit_logs a ON a.action_type IN (f.create_type, f.accept_type, f.reject_type, f.delete_type)
WHERE a.occurred_at >= @reviewStart AND a.occurred_at < @end
ORDER BY f.entity, a.name, a.occurred_at, role <> 'request', a.seq`,

  rejected: `SELECT r.occurred_at, r.name, r.action_type, r.updated_by, r.change_log, r.id
FROM audit_logs r
WHERE r.action_type IN (SELECT value FROM json_each(@rejects))
  AND ${period("r")}
ORDER BY r.occurred_at, r.seq`,

  mutations: `SELECT r.audit_log_id AS id, a.name, a.action_type, a.occurred_at, r.seen_at, a.raw AS original,
       r.raw AS revision
FROM audit_log_revisions r
JOIN audit_logs a ON a.id = r.audit_log_id
WHERE ((a.occurred_at >= @start AND a.occurred_at < @end) OR (r.seen_at >= @start AND r.seen_at < @end))
  AND ${scoped("a", TYPES)}
ORDER BY a.occurred_at, a.seq, r.id`,
  mutationCount: `SELECT count(DISTINCT r.audit_log_id) AS records, count(*) AS revisions
FROM audit_log_revisions r
JOIN audit_logs a ON a.id = r.audit_log_id
WHERE ((a.occurred_at >= @start AND a.occurred_at < @end) OR (r.seen_at >= @start AND r.seen_at < @end))
  AND ${scoped("a", TYPES)}`,

  ...ENTITY_REPORT_QUERIES,
} as const;

export type ReportQueryName = keyof typeof QUERIES;

/** Shown to the reader beside the count of records without an instant: how to list them. */
export const UNPLACED_RECORDS_SQL = "SELECT * FROM audit_logs WHERE occurred_at IS NULL";

/** A row of the CSVs (experiment state changes, config edits, changes with no approved review). */
export interface CsvRow {
  occurred_at: number;
  id: string;
  updated_by: string | null;
  updated_by_user_id: string | null;
  modifier_email: string | null;
  name: string;
  action_type: string;
  change_log: string | null;
  rule_diff_summary: string | null;
}

export interface CountRow {
  records: number;
}

export interface CoverageRow {
  day: string;
  filter_key: string;
  server_total: number;
  local_count_at_sync: number;
  day_closed: number;
  checked_at: number;
  /** Recounted in this snapshot. */
  local_count: number;
}

export interface ActionTypeCount {
  action_type: string;
  category: string;
  records: number;
}

export interface PersonCount {
  updated_by_user_id: string | null;
  updated_by: string | null;
  email: string | null;
  records: number;
}

export interface TimelineRow {
  name: string;
  occurred_at: number;
  action_type: string;
  updated_by: string | null;
  change_log: string | null;
  id: string;
}

/** A config edit, once per rule change of its diff (rule columns null when it has none). */
export interface ConfigEditRow {
  name: string;
  occurred_at: number;
  id: string;
  action_type: string;
  updated_by: string | null;
  change_log: string | null;
  rule_diff_summary: string | null;
  rule_id: string | null;
  rule_name: string | null;
  change: string | null;
  field: string | null;
  old_value: string | null;
  new_value: string | null;
  old_position: number | null;
  new_position: number | null;
}

export interface UnreviewedRow {
  occurred_at: number;
  name: string;
  action_type: string;
  category: string;
  updated_by: string | null;
  id: string;
}

export interface ReviewRecord {
  seq: number;
  id: string;
  occurred_at: number;
  name: string;
  entity: string;
  /** request (…_review_create), accept, or close (reject / delete). */
  role: "request" | "accept" | "close";
  action_type: string;
  change_log: string | null;
  updated_by: string | null;
  updated_by_user_id: string | null;
}

export interface RejectedRow {
  occurred_at: number;
  name: string;
  action_type: string;
  updated_by: string | null;
  change_log: string | null;
  id: string;
}

export interface MutationRow {
  id: string;
  name: string;
  action_type: string;
  occurred_at: number | null;
  seen_at: number;
  /** The first stored version's raw JSON, and the later one's. */
  original: string;
  revision: string;
}

/** An entity's changes by one person of one action type (rule_changes is 0 outside config edits). */
export interface EntitySummaryRow {
  name: string;
  updated_by: string | null;
  action_type: string;
  changes: number;
  rule_changes: number;
  first_at: number;
  last_at: number;
}

/** The executive summary's count of mutated records and of their later versions. */
export interface MutationCount {
  records: number;
  revisions: number;
}

/** The row each query returns. */
export interface ReportRows extends EntityReportRows {
  experimentStateChangesCsv: CsvRow;
  configEditsCsv: CsvRow;
  recordCount: CountRow;
  unplaced: CountRow;
  coverage: CoverageRow;
  byActionType: ActionTypeCount;
  byPerson: PersonCount;
  daily: { day: string; records: number };
  entityCount: CountRow;
  experimentSummary: EntitySummaryRow;
  configSummary: EntitySummaryRow;
  experimentTimelines: TimelineRow;
  configEdits: ConfigEditRow;
  unreviewed: UnreviewedRow;
  unreviewedCount: CountRow;
  unreviewedCsv: CsvRow;
  unreviewedSummary: EntitySummaryRow;
  reviewRecords: ReviewRecord;
  rejected: RejectedRow;
  mutations: MutationRow;
  mutationCount: MutationCount;
}

/** What the report asks about; bindParams turns it into this dialect's bound values. */
export interface ReportParams {
  start: number;
  end: number;
  /** Only these action types; null for all. */
  actionTypes: readonly string[] | null;
  /** The period's days in the report's zone, each with its bounds. */
  days: readonly { day: string; start: number; end: number }[];
  rejects: readonly string[];
  exempt: readonly string[];
  flows: readonly Readonly<Record<"entity" | "create" | "accept" | "reject" | "delete", string>>[];
  reviewWindow: number;
  /** The first and last server day the period overlaps; null when the store has no dated records. */
  serverFromDay: string | null;
  serverToDay: string | null;
}

export function bindParams(p: ReportParams): Record<string, unknown> {
  return {
    start: p.start,
    end: p.end,
    types: p.actionTypes ? JSON.stringify(p.actionTypes) : null,
    days: JSON.stringify(p.days),
    rejects: JSON.stringify(p.rejects),
    exempt: JSON.stringify(p.exempt),
    flows: JSON.stringify(p.flows),
    reviewWindow: p.reviewWindow,
    reviewStart: p.start - p.reviewWindow,
    serverFromDay: p.serverFromDay,
    serverToDay: p.serverToDay,
  };
}

/** The named parameters a query uses, in the order it first uses them. */
export function paramsFor(sql: string, all: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const match of sql.matchAll(/@([A-Za-z]+)/g)) {
    const name = match[1]!;
    picked[name] = all[name] ?? null;
  }
  return picked;
}

/** A query's text and the values it binds, as the report prints them for `flagtrail sql`. */
export function reportQuery(
  name: ReportQueryName,
  params: ReportParams,
): { sql: string; params: Record<string, unknown> } {
  const sql = QUERIES[name];
  return { sql, params: paramsFor(sql, bindParams(params)) };
}

/** How many rows a stream hands over at a time. */
export const BATCH_ROWS = 512;

export interface TimeTexts {
  date_text: string;
  time_text: string;
}

/** The report's reads, all from one snapshot of the store. */
export interface ReportSnapshot {
  /** Every row of a query with a small result. */
  rows<N extends ReportQueryName>(name: N, params: ReportParams): Promise<ReportRows[N][]>;
  /** The rows of a query with a long result, in order, a batch at a time (bounded memory). */
  batches<N extends ReportQueryName>(name: N, params: ReportParams): AsyncIterable<readonly ReportRows[N][]>;
  /** The newest record's place in the hash chain; null for an empty store. */
  chainHead(): Promise<{ seq: number; chainHash: string } | null>;
  /** Every record stored, whatever its time. */
  storedRecords(): Promise<number>;
  /** The date and time texts of the stored records nearest an instant: the one at or before, then after. */
  timeTextsNear(instant: number): Promise<TimeTexts[]>;
}

// The sections read the period's rows several times: a page cache that holds a month of rows keeps
// that from going back to the file each time (64 MiB at most, whatever the store's size).
const REPORT_CACHE_KIB = 65_536;

/** Starts the statement only when the first batch is asked for: an unread stream holds nothing open. */
async function* batchesOf<Row>(start: () => IterableIterator<Row>): AsyncGenerator<Row[]> {
  const rows = start();
  try {
    for (;;) {
      const batch: Row[] = [];
      for (let next = rows.next(); !next.done; next = rows.next()) {
        batch.push(next.value);
        if (batch.length === BATCH_ROWS) break;
      }
      if (batch.length === 0) return;
      yield batch;
    }
  } finally {
    // A consumer that stops early must not leave the statement open inside the read transaction.
    rows.return?.();
  }
}

function snapshotOf(sqlite: Database.Database): ReportSnapshot {
  const statement = (name: ReportQueryName) => sqlite.prepare(QUERIES[name]);
  return {
    rows: async <N extends ReportQueryName>(name: N, params: ReportParams) => {
      const { sql, params: bound } = reportQuery(name, params);
      return sqlite.prepare(sql).all(bound) as ReportRows[N][];
    },
    batches: <N extends ReportQueryName>(name: N, params: ReportParams) => {
      const bound = reportQuery(name, params).params;
      return batchesOf(() => statement(name).iterate(bound) as IterableIterator<ReportRows[N]>);
    },
    chainHead: async () => {
      const head = sqlite.prepare("SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1").get() as
        | { seq: number; chain_hash: string }
        | undefined;
      return head ? { seq: head.seq, chainHash: head.chain_hash } : null;
    },
    storedRecords: async () => sqlite.prepare("SELECT count(*) FROM audit_logs").pluck().get() as number,
    timeTextsNear: async (instant: number) =>
      sqlite
        .prepare(
          `SELECT date_text, time_text FROM (
             SELECT date_text, time_text, occurred_at FROM audit_logs WHERE occurred_at <= ? ORDER BY occurred_at DESC LIMIT 1)
           UNION ALL SELECT date_text, time_text FROM (
             SELECT date_text, time_text, occurred_at FROM audit_logs WHERE occurred_at > ? ORDER BY occurred_at LIMIT 1)`,
        )
        .all(instant, instant) as TimeTexts[],
  };
}

/**
 * Runs `read` inside one read transaction, so every file of a report describes the same snapshot even
 * while a sync is writing (a caller already inside a transaction has its own snapshot). Writes nothing.
 */
export async function readReportSnapshot<T>(
  store: AnyStore,
  read: (snapshot: ReportSnapshot) => Promise<T>,
): Promise<T> {
  if (store.engine === "postgres") return readPgReportSnapshot(store, read);
  const sqlite = sqliteOf(store);
  const cacheSize = sqlite.pragma("cache_size", { simple: true }) as number;
  sqlite.pragma(`cache_size = ${-REPORT_CACHE_KIB}`);
  const ownTransaction = !sqlite.inTransaction;
  if (ownTransaction) sqlite.prepare("BEGIN").run();
  try {
    return await read(snapshotOf(sqlite));
  } finally {
    if (ownTransaction) sqlite.prepare("COMMIT").run();
    sqlite.pragma(`cache_size = ${cacheSize}`);
  }
}
