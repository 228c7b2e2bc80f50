// A page prepared on the prepare worker (./prepareWorker.ts) as it crosses to the main thread, in a form
// the main thread reads cheaply: a structured clone of the PreparedRecord objects cost the receiver about
// what preparing them did (~16 against ~18 ms a 1000-record page), which was why an earlier worker gained
// nothing. Here the numbers travel in one Float64Array (moved, not copied), a valid record's texts
// in one string cut by lengths, and its raw JSON as its place in the response body, which the main thread
// holds already. Rare parts (quarantined records, rule diffs, time warnings) are cloned as they are.
import { recordSpansOf } from "../api/recordTexts.ts";
import type { RuleDiff } from "../diff/rules.ts";
import type { PreparedRecord, RecordColumns, ValidPrepared } from "./pageTally.ts";
import { prepareRecord } from "./prepare.ts";

/** The text columns of a valid record, in the order encode writes and decode reads them. */
const TEXT_COLUMNS = [
  "id",
  "name",
  "actionType",
  "changeLog",
  "updatedBy",
  "updatedByUserId",
  "modifierEmail",
  "serverDay",
  "dateText",
  "timeText",
  "tags",
  "recordHash",
] as const satisfies readonly (keyof RecordColumns)[];

/** Numbers a record: raw start and end in the body (start -1: the raw text leads its texts, end its length), occurred_at (NaN: null), each text's length (-1: null). */
const SLOTS = 3 + TEXT_COLUMNS.length;

/** A record the numbers do not carry: quarantined (whole), or a valid one's diff and time warning. */
export type RarePart =
  | { index: number; invalid: Extract<PreparedRecord, { valid: false }> }
  | { index: number; diff: RuleDiff | null; timeWarning: string | null };

export interface PreparedWire {
  numbers: Float64Array<ArrayBuffer>;
  texts: string;
  rare: RarePart[];
}

/** A page's records prepared (as prepareRecords does) and written for the trip to the main thread. */
export function encodePrepared(records: readonly unknown[], body: string): PreparedWire {
  const spans = recordSpansOf(body, records.length);
  const numbers = new Float64Array(records.length * SLOTS);
  const texts: string[] = [];
  const rare: RarePart[] = [];
  for (let i = 0; i < records.length; i += 1) {
    const cut = spans === null ? undefined : body.slice(spans[2 * i], spans[2 * i + 1]);
    const p = prepareRecord(records[i], cut);
    if (!p.valid) {
      rare.push({ index: i, invalid: p });
      continue;
    }
    const c = p.columns;
    const at = i * SLOTS;
    if (spans !== null && c.raw === cut) {
      numbers[at] = spans[2 * i]!;
      numbers[at + 1] = spans[2 * i + 1]!;
    } else {
      numbers[at] = -1;
      numbers[at + 1] = c.raw.length;
      texts.push(c.raw);
    }
    numbers[at + 2] = c.occurredAt ?? Number.NaN;
    for (let k = 0; k < TEXT_COLUMNS.length; k += 1) {
      const value = c[TEXT_COLUMNS[k]!];
      numbers[at + 3 + k] = value === null ? -1 : value.length;
      if (value !== null) texts.push(value);
    }
    if (p.diff !== null || p.timeWarning !== null)
      rare.push({ index: i, diff: p.diff, timeWarning: p.timeWarning });
  }
  return { numbers, texts: texts.join(""), rare };
}

/** Reads the texts of one page back in the order they were written. */
class TextReader {
  private at = 0;

  constructor(private readonly texts: string) {}

  next(length: number): string {
    const start = this.at;
    this.at += length;
    if (this.at > this.texts.length) throw new Error("prepared page: its texts end early");
    return this.texts.slice(start, this.at);
  }

  nullable(length: number): string | null {
    return length < 0 ? null : this.next(length);
  }

  required(length: number): string {
    if (length < 0) throw new Error("prepared page: a required text is missing");
    return this.next(length);
  }
}

function validRecord(wire: PreparedWire, i: number, body: string, reader: TextReader): ValidPrepared {
  const n = wire.numbers;
  const at = i * SLOTS;
  const raw = n[at]! < 0 ? reader.next(n[at + 1]!) : body.slice(n[at], n[at + 1]);
  const occurredAt = n[at + 2]!;
  const t = at + 3;
  // In TEXT_COLUMNS' order (object literal: every record's columns get the same shape).
  const columns: RecordColumns = {
    id: reader.required(n[t]!),
    name: reader.required(n[t + 1]!),
    actionType: reader.required(n[t + 2]!),
    changeLog: reader.nullable(n[t + 3]!),
    updatedBy: reader.nullable(n[t + 4]!),
    updatedByUserId: reader.nullable(n[t + 5]!),
    modifierEmail: reader.nullable(n[t + 6]!),
    occurredAt: Number.isNaN(occurredAt) ? null : occurredAt,
    serverDay: reader.nullable(n[t + 7]!),
    dateText: reader.required(n[t + 8]!),
    timeText: reader.required(n[t + 9]!),
    tags: reader.nullable(n[t + 10]!),
    raw,
    recordHash: reader.required(n[t + 11]!),
    seq: 0,
    chainHash: "",
    firstSeenAt: 0,
    syncRunId: null,
  };
  return { valid: true, columns, diff: null, timeWarning: null };
}

/** The page's PreparedRecords from `wire`, as prepareRecords would have returned them. */
export function decodePrepared(wire: PreparedWire, body: string, count: number): PreparedRecord[] {
  if (wire.numbers.length !== count * SLOTS) throw new Error("prepared page: another record count");
  const rare = new Map(wire.rare.map((part) => [part.index, part]));
  const reader = new TextReader(wire.texts);
  const prepared = new Array<PreparedRecord>(count);
  for (let i = 0; i < count; i += 1) {
    const part = rare.get(i);
    if (part !== undefined && "invalid" in part) {
      prepared[i] = part.invalid;
      continue;
    }
    const record = validRecord(wire, i, body, reader);
    if (part !== undefined) {
      record.diff = part.diff;
      record.timeWarning = part.timeWarning;
    }
    prepared[i] = record;
  }
  return prepared;
}
