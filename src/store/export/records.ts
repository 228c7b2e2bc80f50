// What `flagtrail export` reads: the audit records in seq order, a keyset batch at a time, with what the
// OCSF mapping adds (rule diff, config version and its diff, findings, the entity's last approval before).
import type { ChainRecord, CopiedColumns, StoredRuleChange } from "../chainRead.ts";
import type { FindingRow } from "../controls/findings.ts";
import type { VersionChange } from "../entityReportQueries.ts";
import type { AnyStore } from "../openAny.ts";
import { inList, queriesOf, type SQL, sql } from "../query.ts";
import type { ChangeRow } from "../reportQueries/rows.ts";

/** The audit record's own columns, as verify's chain read names them, and what the mapping adds. */
export type ExportRecordRow = Omit<CopiedColumns, "tags"> &
  Pick<ChainRecord, "seq" | "id" | "updated_by_user_id" | "modifier_email" | "occurred_at" | "raw"> & {
    first_seen_at: number;
    category: string | null;
    rule_diff_summary: string | null;
    config_key: string | null;
    config_version: number | null;
    /** The config's own id, when flagtrail holds the version this edit produced. */
    config_id: string | null;
    /** The experiment's id as its layer listed it, for an experiment state change (entity history). */
    experiment_id: string | null;
  };

/** A rule_changes row of a record in the batch (its positions are not exported). */
export type RuleChangeRow = Omit<StoredRuleChange, "old_position" | "new_position"> & {
  audit_log_id: string;
};

/** A change in the version a config edit of the batch produced. */
export type VersionChangeRow = VersionChange & {
  audit_log_id: string;
  config_key: string;
  version: number;
  previous_version: number | null;
};

export type RecordFindingRow = Pick<
  FindingRow,
  "id" | "control_id" | "kind" | "severity" | "message" | "first_seen_at"
> & { record_id: string };

/** The approval record a change's entity had last before it (by the review flows' accept types). */
export type ApprovalRow = Omit<ChangeRow, "name"> & { change_id: string };

export interface ExportBatch {
  records: ExportRecordRow[];
  ruleChanges: RuleChangeRow[];
  versionChanges: VersionChangeRow[];
  findings: RecordFindingRow[];
  approvals: ApprovalRow[];
}

/** Records with afterSeq < seq <= toSeq and from <= occurred_at < to (each bound when given; epoch ms). */
export interface RecordRange {
  afterSeq: number;
  toSeq?: number | undefined;
  from?: number | undefined;
  to?: number | undefined;
  limit: number;
}

/** The range's bounds on `a` but its limit, for the records and for their details alike. */
function inRange(range: RecordRange, toSeq = range.toSeq): SQL {
  return sql`a.seq > ${range.afterSeq}
      ${toSeq === undefined ? sql`` : sql`AND a.seq <= ${toSeq}`}
      ${range.from === undefined ? sql`` : sql`AND a.occurred_at >= ${range.from}`}
      ${range.to === undefined ? sql`` : sql`AND a.occurred_at < ${range.to}`}`;
}

/** The next `limit` records after `afterSeq`, as stored (raw included), in seq order: the raw format. */
export async function readRecordBatch(store: AnyStore, range: RecordRange): Promise<ExportRecordRow[]> {
  return (await queriesOf(store)).all<ExportRecordRow>(sql`
    SELECT a.seq, a.id, a.name, a.action_type, a.change_log, a.updated_by, a.updated_by_user_id,
           a.modifier_email, a.occurred_at, a.date_text, a.time_text, a.raw, a.first_seen_at,
           c.category, s.summary AS rule_diff_summary, l.config_key, l.version AS config_version,
           v.config_id,
           CASE WHEN c.category = 'experiment_state_change' THEN
             (SELECT max(x.experiment_id) FROM experiment_snapshots x WHERE x.name = a.name) END AS experiment_id
    FROM audit_logs a
    LEFT JOIN action_type_categories c ON c.action_type = a.action_type
    LEFT JOIN rule_diff_summaries s ON s.audit_log_id = a.id
    LEFT JOIN config_edit_links l ON l.audit_log_id = a.id
    LEFT JOIN config_versions v ON v.config_key = l.config_key AND v.version = l.version
    WHERE ${inRange(range)}
    ORDER BY a.seq
    LIMIT ${range.limit}`);
}

/** The next batch with every detail the OCSF mapping uses, read per batch: memory stays one batch's. */
export async function readExportBatch(
  store: AnyStore,
  range: RecordRange,
  approvalFlows: readonly { accept: string; changeTypes: readonly string[] }[],
  approvalWindowMs: number,
): Promise<ExportBatch> {
  const records = await readRecordBatch(store, range);
  if (records.length === 0)
    return { records, ruleChanges: [], versionChanges: [], findings: [], approvals: [] };
  const q = await queriesOf(store);
  // The details of the batch's records, joined from audit_logs by its seq index and the same bounds (a
  // thousand bound ids cost more to bind than the reads). A period's records are sparse in seq order:
  // without its bounds, one month of 300k read the approvals of 92k records.
  const seqs = inRange(range, records.at(-1)?.seq ?? range.afterSeq);
  const ruleChanges = await q.all<RuleChangeRow>(sql`
    SELECT r.audit_log_id, r.rule_id, r.rule_name, r.change, r.field, r.old_value, r.new_value
    FROM audit_logs a JOIN rule_changes r ON r.audit_log_id = a.id
    WHERE ${seqs} ORDER BY a.seq, r.id`);
  const versionChanges = await q.all<VersionChangeRow>(sql`
    SELECT a.id AS audit_log_id, v.config_key, v.version, v.previous_version, v.field, v.path, v.change, v.old_value, v.new_value
    FROM audit_logs a
    JOIN config_edit_links l ON l.audit_log_id = a.id
    JOIN config_version_changes v ON v.config_key = l.config_key AND v.version = l.version
    WHERE ${seqs}
    ORDER BY a.seq, v.id`);
  const findings = await q.all<RecordFindingRow>(sql`
    SELECT f.id, f.record_id, f.control_id, f.kind, f.severity, f.message, f.first_seen_at
    FROM audit_logs a JOIN control_findings f ON f.record_id = a.id
    WHERE ${seqs} ORDER BY a.seq, f.id COLLATE "binary"`);
  // Each covered change's last approval of its entity in the window before it (the report judges it).
  const approvals: ApprovalRow[] = [];
  for (const flow of approvalFlows) {
    const sameEntity = sql`r.name = a.name AND r.action_type = ${flow.accept}`;
    // The last approval's second, then its last record of that second: SQLite's index cannot order by seq
    // after a range on occurred_at, so one ORDER BY of both read the window's every approval (a batch of
    // a 300k store: 480–750 → 80–120 ms). MATERIALIZED: else PostgreSQL hashes the whole store to join
    // the few approvals (550–650 → 75–110 ms).
    const rows = await q.all<ApprovalRow>(sql`
      WITH x AS MATERIALIZED (
        SELECT a.id AS change_id,
          (SELECT r.id FROM audit_logs r
           WHERE ${sameEntity} AND r.occurred_at = (
             SELECT r.occurred_at FROM audit_logs r
             WHERE ${sameEntity}
               AND r.occurred_at <= a.occurred_at AND r.occurred_at >= a.occurred_at - ${approvalWindowMs}
             ORDER BY r.occurred_at DESC LIMIT 1)
           ORDER BY r.seq DESC LIMIT 1) AS approval_id
        FROM audit_logs a
        WHERE ${seqs} AND a.action_type IN ${inList(flow.changeTypes)} AND a.occurred_at IS NOT NULL
      )
      SELECT x.change_id, p.id, p.action_type, p.updated_by, p.updated_by_user_id, p.occurred_at, p.change_log
      FROM x JOIN audit_logs p ON p.id = x.approval_id`);
    approvals.push(...rows);
  }
  return { records, ruleChanges, versionChanges, findings, approvals };
}
