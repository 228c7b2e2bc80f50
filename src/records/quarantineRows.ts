// The quarantine rows both engines insert: an invalid audit record of a page, or an entity item that
// failed its schema, kept whole (raw JSON, every issue) with where and when it was received. Pure.
import type { InvalidItem } from "../api/entities.ts";
import { recordHash } from "../hash.ts";
import type { PageContext, PreparedRecord } from "./pageTally.ts";

/** The record id of raw JSON that may be anything: a non-empty string `id`, else null. */
export function recordIdOf(raw: unknown): string | null {
  if (raw !== null && typeof raw === "object" && "id" in raw) {
    const id = (raw as { id: unknown }).id;
    if (typeof id === "string" && id.length > 0) return id;
  }
  return null;
}

/** One quarantine row as both engines insert it (the table's columns but its id). */
export interface QuarantineInsert {
  recordId: string | null;
  raw: string;
  rawHash: string;
  issues: string;
  requestPath: string | null;
  receivedAt: number;
  syncRunId: number | null;
  serverDay: string | null;
  dayMin: string | null;
  dayMax: string | null;
}

/**
 * A quarantined record seen again whose date does not parse learns the request's day range, to be
 * narrowed to (coverage counts it within the narrowest range that returned it); null when nothing to do.
 */
export function quarantineNarrowing(
  p: Extract<PreparedRecord, { valid: false }>,
  fresh: boolean,
  context: PageContext,
): { from: string; to: string } | null {
  return !fresh && p.day === null && context.dayRange ? context.dayRange : null;
}

/** The quarantine row of an invalid record of a page (both engines insert the same values). */
export function quarantineRowOf(
  p: Extract<PreparedRecord, { valid: false }>,
  context: PageContext,
  now: number,
): QuarantineInsert {
  return {
    recordId: p.id,
    raw: p.rawJson,
    rawHash: p.hash,
    issues: p.issues,
    requestPath: context.requestPath ?? null,
    receivedAt: now,
    syncRunId: context.syncRunId,
    serverDay: p.day,
    dayMin: context.dayRange?.from ?? null,
    dayMax: context.dayRange?.to ?? null,
  };
}

export interface QuarantineContext {
  requestPath: string;
  now: number;
  syncRunId: number | null;
}

/** The quarantine row of an item that failed its schema (no day: it is not an audit record), on both engines. */
export function itemQuarantineRowOf(item: InvalidItem, context: QuarantineContext): QuarantineInsert {
  return {
    recordId: recordIdOf(item.raw),
    raw: JSON.stringify(item.raw ?? null),
    rawHash: recordHash(item.raw ?? null),
    issues: JSON.stringify(item.issues),
    requestPath: context.requestPath,
    receivedAt: context.now,
    syncRunId: context.syncRunId,
    serverDay: null,
    dayMin: null,
    dayMax: null,
  };
}
