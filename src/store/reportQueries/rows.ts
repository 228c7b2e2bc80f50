// The rows the report queries return, one interface per shape (both engines return the same rows).
import type { WaiverRow } from "../controls/waivers.ts";
import type { EntityBacklogRow } from "../entityBacklog.ts";
import type { EntityReportRows } from "../entityReportQueries.ts";

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
  /** The record's rule changes: config edits' only (their per-config table counts them; not a CSV column). */
  rule_changes?: number;
}

interface CountRow {
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
interface ConfigEditRow {
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

interface MutationRow {
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
/** A change the record controls judge (src/controls/evaluate.ts). */
export interface ChangeRow {
  id: string;
  occurred_at: number;
  name: string;
  action_type: string;
  updated_by: string | null;
  updated_by_user_id: string | null;
  change_log: string | null;
}

export interface ReportRows extends EntityReportRows {
  controlChanges: ChangeRow;
  controlWaivers: WaiverRow;
  controlLastSync: { at: number | null };
  experimentStateChangesCsv: CsvRow;
  configEditsCsv: CsvRow;
  recordCount: CountRow;
  unplaced: CountRow;
  coverage: CoverageRow;
  entityBacklog: EntityBacklogRow;
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
