// The export's one stream of events: a project's stored records in seq order, a batch at a time, each as
// one line of NDJSON (an OCSF event, or the record's raw JSON exactly as stored) with its stable id.
// `flagtrail export` writes the lines to a file; the SIEM sinks send them. Memory is one batch's.

import { ACTION_TYPE_CATEGORIES } from "../api/actionCategories.ts";
import { keysetPages } from "../keyset.ts";
import {
  APPROVING_FLOW,
  REVIEW_EXEMPT_ACTION_TYPES,
  REVIEW_FLOWS,
  REVIEW_WINDOW_MS,
} from "../report/reviews.ts";
import { readExportBatch, readRecordBatch } from "../store/export/records.ts";
import type { AnyStore } from "../store/openAny.ts";
import { recordEventId, recordToOcsf } from "./ocsfRecords.ts";

export const EXPORT_FORMATS = ["ocsf", "raw"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface EventBatchOptions {
  project: string;
  /** Records after this seq (a cursor's value; 0 for all)… */
  afterSeq: number;
  /** …up to this seq, included, when given (where the export started: later records wait for the next). */
  toSeq?: number | undefined;
  /** occurred_at >= from (epoch ms), when given. */
  from?: number | undefined;
  /** occurred_at < to (epoch ms), when given. */
  to?: number | undefined;
  format: ExportFormat;
  batchSize: number;
}

export interface EventBatch {
  /** `id`: project + record id, stable across runs; `line`: the event's JSON without a newline. */
  events: { id: string; line: string }[];
  /** The seq of the batch's last record: a cursor moved here has had this batch. */
  lastSeq: number;
}

/**
 * The review flows as the approval lookup needs them: each accept type and the changes it may cover (its
 * category's action types, as the report pairs them, without the exempt ones and the review records).
 */
const APPROVAL_FLOWS = (() => {
  const reviewTypes = new Set<string>(REVIEW_FLOWS.flatMap((f) => [f.create, f.accept, f.reject, f.delete]));
  const exempt = new Set<string>(REVIEW_EXEMPT_ACTION_TYPES);
  return Object.entries(APPROVING_FLOW).map(([category, entity]) => {
    const f = REVIEW_FLOWS.find((flow) => flow.entity === entity)!;
    const changeTypes = [...ACTION_TYPE_CATEGORIES]
      .filter(([type, c]) => c === category && !exempt.has(type) && !reviewTypes.has(type))
      .map(([type]) => type);
    return { accept: f.accept, changeTypes };
  });
})();

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return map;
}

async function nextBatch(store: AnyStore, options: EventBatchOptions, afterSeq: number) {
  const range = {
    afterSeq,
    toSeq: options.toSeq,
    from: options.from,
    to: options.to,
    limit: options.batchSize,
  };
  if (options.format === "raw") {
    const records = await readRecordBatch(store, range);
    return records.map((r) => ({ seq: r.seq, id: r.id, line: r.raw }));
  }
  const batch = await readExportBatch(store, range, APPROVAL_FLOWS, REVIEW_WINDOW_MS);
  const rules = groupBy(batch.ruleChanges, (c) => c.audit_log_id);
  const findings = groupBy(batch.findings, (f) => f.record_id);
  const approvals = groupBy(batch.approvals, (a) => a.change_id);
  const versions = groupBy(batch.versionChanges, (v) => v.audit_log_id);
  return batch.records.map((r) => {
    const event = recordToOcsf(options.project, r, {
      ruleChanges: rules.get(r.id) ?? [],
      versionChanges: versions.get(r.id) ?? [],
      findings: findings.get(r.id) ?? [],
      approval: approvals.get(r.id)?.[0],
    });
    return { seq: r.seq, id: r.id, line: JSON.stringify(event) };
  });
}

/** The project's records in seq order, `batchSize` at a time, as NDJSON lines with their stable ids. */
export async function* eventBatches(store: AnyStore, options: EventBatchOptions): AsyncGenerator<EventBatch> {
  const pages = keysetPages((afterSeq) => nextBatch(store, options, afterSeq), {
    first: options.afterSeq,
    limit: options.batchSize,
    keyOf: (row) => row.seq,
  });
  for await (const rows of pages) {
    yield {
      events: rows.map((r) => ({ id: recordEventId(options.project, r.id), line: r.line, seq: r.seq })),
      lastSeq: rows.at(-1)!.seq,
    };
  }
}
