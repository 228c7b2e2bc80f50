// The report's reads on PostgreSQL: src/store/reportQueries.ts's queries in this dialect, same names,
// parameters (`@name`, bound from the same JSON values, so the Markdown prints the same `--param`s) and
// rows in the same order. What differs, and why:
//   - JSON lists: json_array_elements(_text)(@x::json) and ->> for SQLite's json_each / json_extract;
//   - text sorts COLLATE "C" (SQLite's byte order; the server's default collation may be ICU's), and so
//     does max() over text;
//   - NULLs sort first ascending as on SQLite (NULLS FIRST where a sorted column can be NULL);
//   - a grouped column appears in GROUP BY (PostgreSQL has no bare columns), a subquery has an alias,
//     ORDER BY uses no output alias inside an expression.
// Everything is read in one REPEATABLE READ, READ ONLY transaction; long results through a cursor.
import type pg from "pg";
import {
  BATCH_ROWS,
  bindParams,
  paramsFor,
  type ReportParams,
  type ReportQueryName,
  type ReportRows,
  type ReportSnapshot,
  type TimeTexts,
} from "../reportQueries.ts";
import type { PgStore } from "./connection.ts";
import { PG_ENTITY_REPORT_QUERIES } from "./entityReportQueries.ts";
import { toPositional } from "./namedParams.ts";
import { inPgReadSnapshot } from "./readSnapshot.ts";

const C = 'COLLATE "C"';
const TYPES =
  "(@types::json IS NULL OR %.action_type IN (SELECT value FROM json_array_elements_text(@types::json)))";
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
  // Grouped in byte order, as the rows are ordered: one sort serves both (the same groups: the default
  // collation is deterministic), where grouping by the collation's (ICU's, say) rules sorted twice.
  return `SELECT v.name ${C} AS name, v.updated_by ${C} AS updated_by, v.action_type ${C} AS action_type,
       count(DISTINCT v.id ${C}) AS changes, ${ruleChanges ? "count(rc.id)" : "0"} AS rule_changes,
       min(v.occurred_at) AS first_at, max(v.occurred_at) AS last_at
FROM ${view} v${join}
WHERE ${period("v")}
GROUP BY v.name ${C}, v.updated_by ${C}, v.action_type ${C}
ORDER BY v.name ${C}, v.updated_by ${C} NULLS FIRST, v.action_type ${C}`;
}

// The changes of the period and the 30 days before it (for the window), both categories in one join on the
// category table, so the two months of the action-type index are read once (through the two views: once
// per view, each with parallel workers); the approvals of the flows' entities.
// The window's verdict is one boolean column: filtered on several predicates over window outputs,
// PostgreSQL estimated 1 row for ~25,000 and joined the rule-diff summaries by a nested loop.
const UNREVIEWED_ORDERED = `WITH events AS (
  SELECT CASE c.category WHEN 'config_edit' THEN 'config' ELSE 'experiment' END AS kind, a.name, a.occurred_at,
         a.seq, a.id, a.action_type, c.category, a.updated_by, 0 AS is_approval
  FROM action_type_categories c
  JOIN audit_logs a ON a.action_type = c.action_type
  WHERE c.category IN ('experiment_state_change', 'config_edit')
    AND c.action_type NOT IN (SELECT value FROM json_array_elements_text(@exempt::json))
    AND a.occurred_at >= @reviewStart AND a.occurred_at < @end
  UNION ALL
  SELECT f.value ->> 'entity', a.name, a.occurred_at, a.seq, a.id, a.action_type, NULL, a.updated_by, 1
  FROM json_array_elements(@flows::json) f
  JOIN audit_logs a ON a.action_type = f.value ->> 'accept'
  WHERE f.value ->> 'entity' IN ('experiment', 'config')
    AND a.occurred_at >= @reviewStart AND a.occurred_at < @end
),
ordered AS (
  SELECT *,
         is_approval = 0 AND occurred_at >= @start AND occurred_at < @end
           AND NOT (coalesce(lag(is_approval) OVER w, 0) = 1 AND lag(occurred_at) OVER w >= occurred_at - @reviewWindow)
           AS unreviewed
  FROM events
  WINDOW w AS (PARTITION BY kind ${C}, name ${C} ORDER BY occurred_at, is_approval DESC, seq)
)`;

/** The unreviewed changes with `columns` of the window's rows, in time order. */
function unreviewedQuery(columns: string): string {
  return `${UNREVIEWED_ORDERED}
SELECT ${columns}
FROM ordered ch
WHERE ch.unreviewed
  AND ${scoped("ch", TYPES)}
ORDER BY ch.occurred_at, ch.seq`;
}

const UNREVIEWED = unreviewedQuery(
  "ch.occurred_at, ch.name, ch.action_type, ch.category, ch.updated_by, ch.id",
);

const IN_COVERAGE_TYPES = "IN (SELECT value FROM json_array_elements_text(c.types_json::json))";

/** The queries of src/store/reportQueries.ts (see the notes there), in PostgreSQL's dialect. */
export const PG_QUERIES: Record<ReportQueryName, string> = {
  ...PG_ENTITY_REPORT_QUERIES,
  experimentStateChangesCsv: csvQuery("experiment_state_changes"),
  configEditsCsv: csvQuery("config_edits"),

  recordCount: `SELECT count(*) AS records
FROM audit_logs a
WHERE ${period("a")}`,

  unplaced: "SELECT count(*) AS records FROM audit_logs WHERE occurred_at IS NULL",

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
          AND (c.types_json IS NULL OR a.action_type ${IN_COVERAGE_TYPES}))
       + (SELECT count(*) FROM listed_days l JOIN audit_logs a ON a.id = l.audit_log_id
          WHERE l.day = c.day
            AND (c.types_json IS NULL OR a.action_type ${IN_COVERAGE_TYPES}))
       + (SELECT count(DISTINCT coalesce(q.record_id, q.raw_hash)) FROM quarantine q
          WHERE coalesce(q.server_day, CASE WHEN q.day_min = q.day_max THEN q.day_min END) = c.day
            AND (q.record_id IS NULL OR q.record_id NOT IN (SELECT id FROM audit_logs))
            AND (c.types_json IS NULL OR q.raw::json ->> 'actionType' ${IN_COVERAGE_TYPES}))
         AS local_count
FROM cov c
ORDER BY c.day ${C}, c.filter_key ${C}`,

  byActionType: `SELECT a.action_type, coalesce(c.category, 'uncategorised') AS category, count(*) AS records
FROM audit_logs a
LEFT JOIN action_type_categories c ON c.action_type = a.action_type
WHERE ${period("a")}
GROUP BY a.action_type, c.category
ORDER BY records DESC, a.action_type ${C}`,

  byPerson: `SELECT a.updated_by_user_id, max(a.updated_by ${C}) AS updated_by, max(a.modifier_email ${C}) AS email,
       count(*) AS records
FROM audit_logs a
WHERE ${period("a")}
GROUP BY a.updated_by_user_id, CASE WHEN a.updated_by_user_id IS NULL THEN a.updated_by END
ORDER BY records DESC, updated_by NULLS FIRST`,

  // MATERIALIZED: inlined, the day's JSON was read again for each of the month's records it grouped
  // (~90 ms on 1M records; ~30 ms read once per day).
  daily: `WITH days AS MATERIALIZED (
  SELECT d.value ->> 'day' AS day, (d.value ->> 'start')::bigint AS day_start,
         (d.value ->> 'end')::bigint AS day_end
  FROM json_array_elements(@days::json) d
)
SELECT d.day, count(a.id) AS records
FROM days d
LEFT JOIN audit_logs a ON a.occurred_at >= d.day_start AND a.occurred_at < d.day_end
  AND ${scoped("a", TYPES)}
GROUP BY d.day
ORDER BY d.day ${C}`,

  // Distinct in byte order: the same count (the default collation is deterministic), without sorting the
  // month's names by the collation's (ICU's, say) rules.
  entityCount: `SELECT count(DISTINCT a.name ${C}) AS records
FROM audit_logs a
WHERE ${period("a")}`,

  experimentSummary: entitySummary("experiment_state_changes", false),
  configSummary: entitySummary("config_edits", true),

  experimentTimelines: `SELECT v.name, v.occurred_at, v.action_type, v.updated_by, v.change_log, v.id
FROM experiment_state_changes v
WHERE ${period("v")}
ORDER BY v.name ${C}, v.occurred_at, v.seq`,

  configEdits: `SELECT v.name, v.occurred_at, v.id, v.action_type, v.updated_by, v.change_log, v.rule_diff_summary,
       rc.rule_id, rc.rule_name, rc.change, rc.field, rc.old_value, rc.new_value, rc.old_position,
       rc.new_position
FROM config_edits v
LEFT JOIN rule_changes rc ON rc.audit_log_id = v.id
WHERE ${period("v")}
ORDER BY v.name ${C}, v.occurred_at, v.seq, rc.id NULLS FIRST`,

  unreviewed: UNREVIEWED,

  unreviewedCount: `SELECT count(*) AS records FROM (\n${UNREVIEWED}\n) AS u`,

  // Joined on seq: an integer, where the id is text compared in the database's collation (ICU, say).
  unreviewedCsv: `WITH unreviewed AS (
${unreviewedQuery("ch.occurred_at, ch.seq")}
)
SELECT a.occurred_at, a.id, a.updated_by, a.updated_by_user_id, a.modifier_email, a.name, a.action_type,
       a.change_log, s.summary AS rule_diff_summary
FROM unreviewed u
JOIN audit_logs a ON a.seq = u.seq
LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
ORDER BY a.occurred_at, a.seq`,

  unreviewedSummary: `WITH unreviewed AS (
${UNREVIEWED}
)
SELECT u.name, u.updated_by, u.action_type, count(*) AS changes, 0 AS rule_changes,
       min(u.occurred_at) AS first_at, max(u.occurred_at) AS last_at
FROM unreviewed u
GROUP BY u.name, u.updated_by, u.action_type
ORDER BY u.name ${C}, u.updated_by ${C} NULLS FIRST, u.action_type ${C}`,

  // One row per flow and action type, each type's records of the window found through the index on
  // (action_type, occurred_at): a few thousand of the window's ~160,000 on 1M. (An IN over the flow's
  // four columns was planned as a scan of every record of the window against each flow, re-reading the
  // JSON each time: seconds on 1M. A plain join, as one hash join over every record of the window, since
  // PostgreSQL counts 100 rows for any json_array_elements: ~150 ms. The LATERAL subquery with OFFSET 0
  // is not flattened into the join, so it is probed per action type: ~30 ms.)
  reviewRecords: `WITH flows AS (
  SELECT f.n, f.value ->> 'entity' AS entity, f.value ->> 'create' AS create_type,
         f.value ->> 'accept' AS accept_type, f.value ->> 'reject' AS reject_type,
         f.value ->> 'delete' AS delete_type
  FROM json_array_elements(@flows::json) WITH ORDINALITY AS f(value, n)
),
flow_types AS (
  SELECT DISTINCT f.n, t.action_type
  FROM flows f
  CROSS JOIN unnest(ARRAY[f.create_type, f.accept_type, f.reject_type, f.delete_type]) AS t(action_type)
)
SELECT a.seq, a.id, a.occurred_at, a.name, f.entity,
       CASE a.action_type WHEN f.create_type THEN 'request' WHEN f.accept_type THEN 'accept' ELSE 'close' END
         AS role,
       a.action_type, a.change_log, a.updated_by, a.updated_by_user_id
FROM flow_types t
JOIN flows f ON f.n = t.n
CROSS JOIN LATERAL (
  SELECT r.seq, r.id, r.occurred_at, r.name, r.action_type, r.change_log, r.updated_by, r.updated_by_user_id
  FROM audit_logs r
  WHERE r.action_type = t.action_type AND r.occurred_at >= @reviewStart AND r.occurred_at < @end
  OFFSET 0
) a
ORDER BY f.entity ${C}, a.name ${C}, a.occurred_at, a.action_type <> f.create_type, a.seq`,

  rejected: `SELECT r.occurred_at, r.name, r.action_type, r.updated_by, r.change_log, r.id
FROM audit_logs r
WHERE r.action_type IN (SELECT value FROM json_array_elements_text(@rejects::json))
  AND ${period("r")}
ORDER BY r.occurred_at, r.seq`,

  mutations: `SELECT r.audit_log_id AS id, a.name, a.action_type, a.occurred_at, r.seen_at, a.raw AS original,
       r.raw AS revision
FROM audit_log_revisions r
JOIN audit_logs a ON a.id = r.audit_log_id
WHERE ((a.occurred_at >= @start AND a.occurred_at < @end) OR (r.seen_at >= @start AND r.seen_at < @end))
  AND ${scoped("a", TYPES)}
ORDER BY a.occurred_at NULLS FIRST, a.seq, r.id`,
  mutationCount: `SELECT count(DISTINCT r.audit_log_id) AS records, count(*) AS revisions
FROM audit_log_revisions r
JOIN audit_logs a ON a.id = r.audit_log_id
WHERE ((a.occurred_at >= @start AND a.occurred_at < @end) OR (r.seen_at >= @start AND r.seen_at < @end))
  AND ${scoped("a", TYPES)}`,
};

/** A query's PostgreSQL text and the values it binds, as the report prints them for `flagtrail sql`. */
export function pgReportQuery(
  name: ReportQueryName,
  params: ReportParams,
): { sql: string; params: Record<string, unknown> } {
  const sql = PG_QUERIES[name];
  return { sql, params: paramsFor(sql, bindParams(params)) };
}

let cursors = 0;

/** The rows of a query through its own cursor, BATCH_ROWS at a time; the cursor is closed however the reader stops. */
async function* cursorBatches<Row>(
  client: pg.ClientBase,
  text: string,
  values: unknown[],
): AsyncGenerator<Row[]> {
  cursors += 1;
  const cursor = `flagtrail_report_${cursors}`;
  await client.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${text}`, values);
  try {
    for (;;) {
      const batch = (await client.query(`FETCH ${BATCH_ROWS} FROM ${cursor}`)).rows as Row[];
      if (batch.length > 0) yield batch;
      if (batch.length < BATCH_ROWS) return;
    }
  } finally {
    await client.query(`CLOSE ${cursor}`);
  }
}

function snapshotOf(client: pg.ClientBase): ReportSnapshot {
  const bound = (name: ReportQueryName, params: ReportParams) => {
    const query = pgReportQuery(name, params);
    return toPositional(query.sql, query.params);
  };
  return {
    rows: async <N extends ReportQueryName>(name: N, params: ReportParams) => {
      const { text, values } = bound(name, params);
      return (await client.query(text, values)).rows as ReportRows[N][];
    },
    batches: <N extends ReportQueryName>(name: N, params: ReportParams) => {
      const { text, values } = bound(name, params);
      return cursorBatches<ReportRows[N]>(client, text, values);
    },
    chainHead: async () => {
      const [head] = (
        await client.query<{ seq: number; chain_hash: string }>(
          "SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1",
        )
      ).rows;
      return head ? { seq: head.seq, chainHash: head.chain_hash } : null;
    },
    storedRecords: async () =>
      (await client.query<{ n: number }>("SELECT count(*) AS n FROM audit_logs")).rows[0]?.n ?? 0,
    timeTextsNear: async (instant: number) =>
      (
        await client.query<TimeTexts>(
          `(SELECT date_text, time_text FROM audit_logs WHERE occurred_at <= $1 ORDER BY occurred_at DESC LIMIT 1)
           UNION ALL
           (SELECT date_text, time_text FROM audit_logs WHERE occurred_at > $1 ORDER BY occurred_at LIMIT 1)`,
          [instant],
        )
      ).rows,
  };
}

/** readReportSnapshot for PostgreSQL: one REPEATABLE READ, READ ONLY transaction; writes nothing. */
export function readPgReportSnapshot<T>(
  store: PgStore,
  read: (snapshot: ReportSnapshot) => Promise<T>,
): Promise<T> {
  return inPgReadSnapshot(store, async (client) => {
    // A report reads every cursor to its end: plan for all rows, not for the first tenth (the default,
    // which on a 1M-record store chose plans ~20% slower for the month's CSVs and summaries: bench).
    // And sorts in memory: the unreviewed window sorts two months of changes (~6 MB for 1M records),
    // which the default 4 MB sent to disk. Both for this transaction only.
    await client.query("SET LOCAL cursor_tuple_fraction = 1.0");
    await client.query("SET LOCAL work_mem = '32MB'");
    // And reads the period's index and table pages, which its first queries have just read: a random
    // page costs about what a sequential one does (the default 4.0 is for spinning disks, and planned
    // the review records' per-action-type index probes as a scan of every record of the window).
    await client.query("SET LOCAL random_page_cost = 1.1");
    return await read(snapshotOf(client));
  });
}
