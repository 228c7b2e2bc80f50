// The simulator's audit log: records held in one array sorted by instant (ties in arrival order),
// so that a date window is two binary searches and a page is a slice — O(log n + page size) whatever
// the page number. Per-action-type position arrays answer `actionTypes` filters without a full scan.
// Rarer filters (name, tags, several action types) and the non-time sort keys materialise the
// filtered list once and cache it until the log changes.
import type { SimActor, SimAuditRecord } from "./types.ts";
import type { ZonedClock } from "./zonedTime.ts";

export const SORT_KEYS = [
  "id",
  "name",
  "changeLog",
  "actionType",
  "date",
  "time",
  "updatedBy",
  "updatedByUserID",
] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export interface StoredRecord {
  /** Index in the sorted array; rewritten when a back-dated record is inserted. */
  pos: number;
  /** Epoch ms. */
  at: number;
  id: string;
  name: string;
  changeLog: string;
  actionType: string;
  actor: SimActor;
  changes: Record<string, unknown>;
  tags: string[];
  /** Fields set by a mutation under the same id; they win over the computed ones when served. */
  override?: Record<string, unknown>;
}

export interface NewRecord {
  at: number;
  id: string;
  name: string;
  changeLog: string;
  actionType: string;
  actor: SimActor;
  changes?: Record<string, unknown> | undefined;
  tags?: string[] | undefined;
}

export interface AuditQuery {
  /** Inclusive lower bound, epoch ms. */
  fromMs: number;
  /** Exclusive upper bound, epoch ms. */
  toMs: number;
  sortKey: SortKey;
  sortOrder: "asc" | "desc";
  /** Exact match on the record's name (the API's `id` parameter). */
  name?: string;
  /** Records carrying any of these tags. */
  tags?: string[];
  /** Records of any of these action types. */
  actionTypes?: string[];
  /** Cut the sorted list at this record, exclusive (desc: newer ones; asc: older ones). */
  latestID?: string;
}

export interface QueryResult {
  total: number;
  items: StoredRecord[];
}

/** A read-only view of positions in time order, without copying when it can be avoided. */
interface PositionList {
  length: number;
  get(i: number): number;
}

const EMPTY_CHANGES: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
const EMPTY_TAGS: string[] = Object.freeze([]) as unknown as string[];
const CACHE_SIZE = 16;

function lowerBound(length: number, below: (i: number) => boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (below(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class AuditStore {
  private records: StoredRecord[] = [];
  private readonly byId = new Map<string, StoredRecord>();
  private byType = new Map<string, number[]>();
  private cache = new Map<string, number[]>();
  /** Bumped on every change; cached lists are only valid for the version they were built at. */
  private version = 0;

  constructor(private readonly clock: ZonedClock) {}

  get size(): number {
    return this.records.length;
  }

  get newestAt(): number | undefined {
    return this.records[this.records.length - 1]?.at;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  get(id: string): StoredRecord | undefined {
    return this.byId.get(id);
  }

  /** Oldest first. */
  at(pos: number): StoredRecord | undefined {
    return this.records[pos];
  }

  append(input: NewRecord): StoredRecord {
    if (this.byId.has(input.id)) throw new Error(`duplicate audit log id ${input.id}`);
    const record: StoredRecord = {
      pos: this.records.length,
      at: input.at,
      id: input.id,
      name: input.name,
      changeLog: input.changeLog,
      actionType: input.actionType,
      actor: input.actor,
      changes: input.changes ?? EMPTY_CHANGES,
      tags: input.tags ?? EMPTY_TAGS,
    };
    const newest = this.newestAt;
    this.byId.set(record.id, record);
    this.version++;
    if (newest === undefined || input.at >= newest) {
      this.records.push(record);
      let positions = this.byType.get(record.actionType);
      if (positions === undefined) {
        positions = [];
        this.byType.set(record.actionType, positions);
      }
      positions.push(record.pos);
    } else {
      // A back-dated record (control route): rare, so an O(n) rebuild keeps the fast path simple.
      const index = lowerBound(this.records.length, (i) => this.records[i]!.at <= input.at);
      this.records.splice(index, 0, record);
      this.reindex();
    }
    return record;
  }

  /** Changes fields of a record while keeping its id and its place in time. */
  mutate(id: string, patch: Record<string, unknown>): StoredRecord | undefined {
    const record = this.byId.get(id);
    if (record === undefined) return undefined;
    const { id: _ignored, ...rest } = patch;
    record.override = { ...record.override, ...rest };
    this.version++;
    return record;
  }

  private reindex(): void {
    this.byType = new Map();
    this.records.forEach((record, pos) => {
      record.pos = pos;
      let positions = this.byType.get(record.actionType);
      if (positions === undefined) {
        positions = [];
        this.byType.set(record.actionType, positions);
      }
      positions.push(pos);
    });
  }

  /** The record as the API serves it. */
  render(record: StoredRecord): SimAuditRecord {
    const rendered: SimAuditRecord = {
      id: record.id,
      name: record.name,
      changeLog: record.changeLog,
      actionType: record.actionType,
      date: this.clock.formatDate(record.at),
      time: this.clock.formatTime(record.at),
      updatedBy: record.actor.name,
      updatedByUserID: record.actor.id,
      modifierEmail: record.actor.email,
      changes: record.changes,
      tags: record.tags,
    };
    return record.override === undefined ? rendered : { ...rendered, ...record.override };
  }

  query(query: AuditQuery, offset: number, limit: number): QueryResult {
    const list = this.sortedList(query);
    const items: StoredRecord[] = [];
    const end = Math.min(list.length, offset + limit);
    for (let i = offset; i < end; i++) items.push(this.records[list.get(i)]!);
    return { total: list.length, items };
  }

  private sortedList(query: AuditQuery): PositionList {
    const inTime = this.timeOrdered(query);
    if (query.sortKey === "time" || query.sortKey === "date") {
      if (query.sortOrder === "asc") return inTime;
      return { length: inTime.length, get: (i) => inTime.get(inTime.length - 1 - i) };
    }
    const key = this.cacheKey("sort", query);
    let sorted = this.cache.get(key);
    if (sorted === undefined) {
      sorted = [];
      for (let i = 0; i < inTime.length; i++) sorted.push(inTime.get(i));
      const field = query.sortKey;
      const values = new Map<number, string>();
      for (const pos of sorted) values.set(pos, this.fieldText(this.records[pos]!, field));
      const direction = query.sortOrder === "asc" ? 1 : -1;
      sorted.sort((a, b) => {
        const va = values.get(a)!;
        const vb = values.get(b)!;
        if (va !== vb) return va < vb ? -direction : direction;
        return (a - b) * direction;
      });
      this.remember(key, sorted);
    }
    const list = sorted;
    return { length: list.length, get: (i) => list[i]! };
  }

  private fieldText(record: StoredRecord, field: SortKey): string {
    const overridden = record.override?.[field];
    if (overridden !== undefined) return String(overridden);
    switch (field) {
      case "updatedBy":
        return record.actor.name;
      case "updatedByUserID":
        return record.actor.id;
      case "id":
      case "name":
      case "changeLog":
      case "actionType":
        return record[field];
      default:
        return String(record.at);
    }
  }

  /** Positions matching every filter, oldest first. */
  private timeOrdered(query: AuditQuery): PositionList {
    let lo = lowerBound(this.records.length, (i) => this.records[i]!.at < query.fromMs);
    let hi = lowerBound(this.records.length, (i) => this.records[i]!.at < query.toMs);
    if (query.latestID !== undefined) {
      // An unknown id cuts nothing: the list never meets the record it should stop at.
      const stop = this.byId.get(query.latestID);
      if (stop !== undefined) {
        if (query.sortOrder === "desc") lo = Math.max(lo, stop.pos + 1);
        else hi = Math.min(hi, stop.pos);
      }
    }
    if (hi <= lo) return { length: 0, get: () => 0 };

    let base: PositionList;
    const types = query.actionTypes;
    if (types === undefined || types.length === 0) {
      const start = lo;
      base = { length: hi - lo, get: (i) => start + i };
    } else if (new Set(types).size === 1) {
      const positions = this.byType.get(types[0]!) ?? [];
      const a = lowerBound(positions.length, (i) => positions[i]! < lo);
      const b = lowerBound(positions.length, (i) => positions[i]! < hi);
      base = { length: b - a, get: (i) => positions[a + i]! };
    } else {
      const key = this.cacheKey("types", { types: [...new Set(types)].sort(), lo, hi });
      let merged = this.cache.get(key);
      if (merged === undefined) {
        merged = [];
        for (const type of new Set(types)) {
          const positions = this.byType.get(type) ?? [];
          const a = lowerBound(positions.length, (i) => positions[i]! < lo);
          const b = lowerBound(positions.length, (i) => positions[i]! < hi);
          for (let i = a; i < b; i++) merged.push(positions[i]!);
        }
        merged.sort((x, y) => x - y);
        this.remember(key, merged);
      }
      const list = merged;
      base = { length: list.length, get: (i) => list[i]! };
    }

    if (query.name === undefined && (query.tags === undefined || query.tags.length === 0)) return base;
    const key = this.cacheKey("filter", { ...query, lo, hi, sortKey: null, sortOrder: null });
    let filtered = this.cache.get(key);
    if (filtered === undefined) {
      filtered = [];
      const wantedTags = query.tags && query.tags.length > 0 ? new Set(query.tags) : undefined;
      for (let i = 0; i < base.length; i++) {
        const pos = base.get(i);
        const record = this.records[pos]!;
        if (query.name !== undefined && this.fieldText(record, "name") !== query.name) continue;
        if (wantedTags !== undefined && !this.tagsOf(record).some((tag) => wantedTags.has(tag))) continue;
        filtered.push(pos);
      }
      this.remember(key, filtered);
    }
    const list = filtered;
    return { length: list.length, get: (i) => list[i]! };
  }

  private tagsOf(record: StoredRecord): string[] {
    const overridden = record.override?.tags;
    return Array.isArray(overridden) ? overridden.map(String) : record.tags;
  }

  private cacheKey(kind: string, parts: unknown): string {
    return `${this.version}:${kind}:${JSON.stringify(parts)}`;
  }

  private remember(key: string, list: number[]): void {
    if (this.cache.size >= CACHE_SIZE) {
      // Drop entries of older versions first, then the oldest entry.
      const prefix = `${this.version}:`;
      for (const k of this.cache.keys()) if (!k.startsWith(prefix)) this.cache.delete(k);
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(key, list);
  }
}
