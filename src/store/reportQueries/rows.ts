// The rows the report queries return, one type per shape (both engines return the same rows).
import type { StoredRuleChange } from "../chainRead.ts";
import type { WaiverRow } from "../controls/waivers.ts";
import type { EntityBacklogRow } from "../entityBacklog.ts";
import type { EntityReportRows } from "../entityReportQueries.ts";

export type Nullable<T> = { [K in keyof T]: T[K] | null };

/** An audit record as most lists name it. */
export interface RecordRow {
  occurred_at: number;
  id: string;
  name: string;
  action_type: string;
  updated_by: string | null;
}

export type TimelineRow = RecordRow & { change_log: string | null };

/** A change the record controls judge (src/controls/evaluate.ts). */
export type ChangeRow = TimelineRow & { updated_by_user_id: string | null };

/** A row of the CSVs (experiment state changes, config edits, changes with no approved review). */
export type CsvRow = ChangeRow & {
  modifier_email: string | null;
  rule_diff_summary: string | null;
  /** The record's rule changes: config edits' only (their per-config table counts them; not a CSV column). */
  rule_changes?: number;
};

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

/** A config edit, once per rule change of its diff (rule columns null when it has none). */
type ConfigEditRow = TimelineRow & { rule_diff_summary: string | null } & Nullable<StoredRuleChange>;

export type UnreviewedRow = RecordRow & { category: string };

export type ReviewRecord = ChangeRow & {
  seq: number;
  entity: string;
  /** request (…_review_create), accept, or close (reject / delete). */
  role: "request" | "accept" | "close";
};

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

export interface ReportRows extends EntityReportRows {
  controlChanges: ChangeRow & { category: string };
  controlWaivers: WaiverRow;
  controlLastSync: { at: number | null };
  experimentStateChangesCsv: CsvRow;
  configEditsCsv: CsvRow;
  recordCount: CountRow;
  unplaced: CountRow;
  quarantined: { records: number; maybe: number };
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
  rejected: TimelineRow;
  mutations: MutationRow;
  mutationCount: MutationCount;
}
