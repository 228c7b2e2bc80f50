// Preparing a page's records as the sync receives them, before its batch's write transaction: each
// record validated (or its quarantine row's fields worked out), hashed, its columns and rule diff. Pure:
// no database; the store's writers (src/store/writes.ts, src/store/pg/writes.ts) take the result.
import type { z } from "zod";
import { type ParsedAuditTime, parseAuditTime } from "../api/auditTime.ts";
import { parseAuditLogRecord } from "../api/fastParse.ts";
import { recordTextsOf, sameLengthAsJson } from "../api/recordTexts.ts";
import type { AuditLogRecord } from "../api/schemas.ts";
import { diffRecordChanges } from "../diff/rules.ts";
import { canonicalJson, sha256Hex } from "../hash.ts";
import { type PreparedRecord, type RecordColumns, serverDayOfDateText } from "./pageTally.ts";
import { recordIdOf } from "./quarantineRows.ts";

export type TimeParser = (dateText: string, timeText: string) => ParsedAuditTime | null;

function jsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function modifierEmailText(value: AuditLogRecord["modifierEmail"]): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? value : JSON.stringify(value);
}

function rawDateOf(raw: unknown): unknown {
  return raw !== null && typeof raw === "object" && "date" in raw
    ? (raw as { date: unknown }).date
    : undefined;
}

function issuesJson(issues: readonly z.core.$ZodIssue[]): string {
  return JSON.stringify(
    issues.map((issue) => ({ code: issue.code, path: issue.path.map(String), message: issue.message })),
  );
}

function columnsOf(
  record: AuditLogRecord,
  raw: string,
  hash: string,
  time: ParsedAuditTime | null,
): RecordColumns {
  return {
    id: record.id,
    name: record.name,
    actionType: record.actionType,
    changeLog: record.changeLog ?? null,
    updatedBy: record.updatedBy ?? null,
    updatedByUserId: record.updatedByUserID ?? null,
    modifierEmail: modifierEmailText(record.modifierEmail),
    occurredAt: time?.occurredAt ?? null,
    serverDay: time?.serverDay ?? serverDayOfDateText(record.date),
    dateText: record.date,
    timeText: record.time,
    tags: jsonOrNull(record.tags),
    raw,
    recordHash: hash,
    seq: 0,
    chainHash: "",
    firstSeenAt: 0,
    syncRunId: null,
  };
}

/**
 * Prepares a page's records. `body`, the response text they were parsed from, gives their raw JSON
 * without writing it again, when it holds exactly that text (src/api/recordTexts.ts).
 */
export function prepareRecords(
  records: readonly unknown[],
  parseTime: TimeParser = parseAuditTime,
  body?: string,
): PreparedRecord[] {
  const texts = body === undefined ? null : recordTextsOf(body, records.length);
  return records.map((raw, i): PreparedRecord => {
    // Stored as received (key order included); hashed in canonical form, so key order never makes a revision.
    const canonical = canonicalJson(raw ?? null);
    const hash = sha256Hex(canonical);
    const cut = texts?.[i];
    const rawJson = sameLengthAsJson(cut, canonical) ? cut : JSON.stringify(raw ?? null);
    const parsed = parseAuditLogRecord(raw);
    if (!parsed.success) {
      return {
        valid: false,
        id: recordIdOf(raw),
        rawJson,
        hash,
        issues: issuesJson(parsed.error.issues),
        day: serverDayOfDateText(rawDateOf(raw)),
      };
    }
    const record = parsed.data;
    const time = parseTime(record.date, record.time);
    // Most records have `changes: {}`; only rule edits carry changes.rules to diff.
    const diff = record.changes && "rules" in record.changes ? diffRecordChanges(record.changes) : null;
    const timeWarning =
      time === null
        ? `record ${record.id}: could not parse date/time ${JSON.stringify(record.date)} ${JSON.stringify(record.time)}; stored with occurred_at NULL`
        : null;
    return { valid: true, columns: columnsOf(record, rawJson, hash, time), diff, timeWarning };
  });
}
