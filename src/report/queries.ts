// The SQL behind every file and section of the report. The Markdown prints each query next to its
// section, followed by its parameter values as `--param name=value` (src/report/sqlParams.ts), so a
// reader can re-run it with `flagtrail sql`. Parameters: @start/@end epoch-ms bounds ([start, end)), @types JSON array of action
// types or NULL for all, @fromDay/@toDay the period's days, @serverFromDay/@serverToDay the server days it overlaps, @days/@approvals/@rejects/@exempt/@flows
// JSON lists built from code (src/report/reviews.ts), @reviewWindow the review validity in ms and
// @reviewStart = @start - @reviewWindow.

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

export const QUERIES = {
  experimentStateChangesCsv: csvQuery("experiment_state_changes"),
  configEditsCsv: csvQuery("config_edits"),

  recordCount: `SELECT count(*) AS records
FROM audit_logs a
WHERE ${period("a")}`,

  unplaced: "SELECT count(*) AS records FROM audit_logs WHERE occurred_at IS NULL",

  // Coverage is kept per server day (the API's calendar day in the server's zone). The local count is
  // recounted in this snapshot (stored records plus quarantined ones, as the sync counts them) rather
  // than trusted from sync time. A filter key is "all" or "types:" + comma-separated action types.
  coverage: `WITH cov AS (
  SELECT c.*,
         CASE WHEN c.filter_key = 'all' THEN NULL
              ELSE '["' || replace(substr(c.filter_key, 7), ',', '","') || '"]' END AS types_json
  FROM coverage c
  WHERE c.day >= @serverFromDay AND c.day <= @serverToDay
)
SELECT c.day, c.filter_key, c.server_total, c.local_count AS local_count_at_sync, c.day_closed, c.checked_at,
       (SELECT count(*) FROM audit_logs a
        WHERE a.server_day = c.day
          AND (c.types_json IS NULL OR a.action_type IN (SELECT value FROM json_each(c.types_json))))
       + (SELECT count(DISTINCT coalesce(q.record_id, q.raw_hash)) FROM quarantine q
          WHERE q.server_day = c.day
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
  unreviewed: `WITH events AS (
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
ORDER BY ch.occurred_at, ch.seq`,

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

  chainHead: "SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1",
} as const;

export type QueryName = keyof typeof QUERIES;

/** The named parameters a query uses, picked from all of the report's parameters. */
export function paramsFor(sql: string, all: Record<string, unknown>): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const match of sql.matchAll(/@([A-Za-z]+)/g)) {
    const name = match[1]!;
    picked[name] = all[name] ?? null;
  }
  return picked;
}
