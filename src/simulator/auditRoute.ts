// GET /console/v1/audit_logs: query parsing, the date window in the server's zone, the envelope,
// and the faults that only make sense for this endpoint (clamp, malformed, mutation, head insert).
import { z } from "zod";
import type { AuditQuery, AuditStore, SortKey } from "./auditStore.ts";
import { SORT_KEYS } from "./auditStore.ts";
import type { Counters } from "./counters.ts";
import type { FaultEngine } from "./faults.ts";
import { MALFORMATIONS } from "./faults.ts";
import { badRequest, type FieldError } from "./responses.ts";
import type { SimRequest, SimResponse } from "./types.ts";
import type { ZonedClock } from "./zonedTime.ts";
import { addDays, isCalendarDay } from "./zonedTime.ts";

const AUDIT_LOGS_MESSAGE = "Audit logs listed successfully.";
const DEFAULT_LIMIT = 100;
/** Both dates omitted → the last 90 days; startDate omitted → 90 days before endDate. */
const DEFAULT_WINDOW_DAYS = 90;
/** `totalItems` of the repeating-page mode: more pages than any client should ever read. */
export const REPEATING_TOTAL = 1_000_000_000;
/** Ids of the records the endless-fresh-ids mode makes up: no generated record has them. */
export const ENDLESS_ID_PREFIX = "ffffffff";
/** `startTime`/`endTime` (newer API versions) must span less than this. */
const MAX_TIME_RANGE_MS = 7 * 86_400_000;

export interface AuditRouteContext {
  store: AuditStore;
  clock: ZonedClock;
  faults: FaultEngine;
  counters: Counters;
  now: () => number;
  linkStyle: "host" | "relative";
  /** The declared largest `limit`, and what happens above it. */
  maxLimit: number;
  overLimit: "clamp" | "reject";
  /** Appends `count` generated records at the newest end (the head-insert fault). */
  insertAtHead: (count: number) => void;
}

const positiveInt = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, { error: `${name} must be a positive integer` })
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n) && n >= 1, { error: `${name} must be a positive integer` });

const epochMs = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, { error: `${name} must be epoch milliseconds` })
    .transform(Number);

const day = (name: string) =>
  z.string().refine(isCalendarDay, { error: `${name} must be a date YYYY-MM-DD` });

const querySchema = z
  .object({
    id: z.string().optional(),
    sortKey: z.enum(SORT_KEYS, { error: `sortKey must be one of ${SORT_KEYS.join(", ")}` }).default("time"),
    sortOrder: z.enum(["asc", "desc"], { error: "sortOrder must be asc or desc" }).default("desc"),
    latestID: z.string().min(1).optional(),
    tags: z.array(z.string()).optional(),
    actionTypes: z.array(z.string().min(1, { error: "actionTypes must not be empty" })).optional(),
    startDate: day("startDate").optional(),
    endDate: day("endDate").optional(),
    startTime: epochMs("startTime").optional(),
    endTime: epochMs("endTime").optional(),
    limit: positiveInt("limit").default(DEFAULT_LIMIT),
    page: positiveInt("page").default(1),
  })
  .superRefine((q, ctx) => {
    if (q.startDate !== undefined && q.endDate !== undefined && q.startDate > q.endDate) {
      ctx.addIssue({ code: "custom", path: ["startDate"], message: "startDate must not be after endDate" });
    }
    if ((q.startTime === undefined) !== (q.endTime === undefined)) {
      ctx.addIssue({ code: "custom", path: ["startTime"], message: "startTime and endTime go together" });
    }
    if (q.startTime !== undefined && q.endTime !== undefined) {
      if (q.endTime < q.startTime || q.endTime - q.startTime >= MAX_TIME_RANGE_MS) {
        ctx.addIssue({
          code: "custom",
          path: ["endTime"],
          message: "endTime must follow startTime by less than 7 days",
        });
      }
    }
  });
type ParsedQuery = z.infer<typeof querySchema>;

/** Repeated keys (`actionTypes=a&actionTypes=b`), a single value, or a comma list are all accepted. */
function listParam(query: URLSearchParams, ...names: string[]): string[] | undefined {
  const values = names.flatMap((name) => query.getAll(name)).flatMap((v) => v.split(","));
  const trimmed = values.map((v) => v.trim()).filter((v) => v !== "");
  return trimmed.length > 0 ? trimmed : undefined;
}

function parseQuery(query: URLSearchParams): ParsedQuery | FieldError[] {
  const single = (name: string) => query.get(name) ?? undefined;
  const parsed = querySchema.safeParse({
    id: single("id"),
    sortKey: single("sortKey"),
    sortOrder: single("sortOrder"),
    latestID: single("latestID"),
    tags: listParam(query, "tags", "tags[]"),
    actionTypes: listParam(query, "actionType", "actionTypes", "actionTypes[]"),
    startDate: single("startDate"),
    endDate: single("endDate"),
    startTime: single("startTime"),
    endTime: single("endTime"),
    limit: single("limit"),
    page: single("page"),
  });
  if (parsed.success) return parsed.data;
  return parsed.error.issues.map((issue) => ({
    property: issue.path.map(String).join(".") || "query",
    message: issue.message,
  }));
}

/** The instant window of a query: whole local days of the server's zone, both ends inclusive. */
function windowOf(q: ParsedQuery, clock: ZonedClock, now: number): { fromMs: number; toMs: number } {
  if (q.startTime !== undefined && q.endTime !== undefined) {
    return { fromMs: q.startTime, toMs: q.endTime + 1 };
  }
  const endDate = q.endDate ?? clock.localDay(now);
  const startDate = q.startDate ?? addDays(endDate, -DEFAULT_WINDOW_DAYS);
  return { fromMs: clock.startOfDay(startDate), toMs: clock.startOfDay(addDays(endDate, 1)) };
}

function links(
  request: SimRequest,
  style: "host" | "relative",
  page: number,
  limit: number,
  total: number,
): { nextPage: string | null; previousPage: string | null; all: string } {
  let base: string;
  let filters = "";
  if (style === "host") {
    base = `${request.headers.host ?? "statsigapi.net"}${request.pathname}`;
  } else {
    // The relative form copies the request's filters in, decoded: spaces stay unencoded.
    base = request.pathname;
    for (const [key, value] of request.query) {
      if (key !== "page" && key !== "limit") filters += `${key}=${value}&`;
    }
  }
  const link = (n: number) => `${base}?${filters}page=${n}&limit=${limit}`;
  return {
    nextPage: page * limit < total ? link(page + 1) : null,
    previousPage: page > 1 ? link(page - 1) : null,
    all: style === "host" ? base : filters === "" ? base : `${base}?${filters.slice(0, -1)}`,
  };
}

/** The granted page size, or a 400 when the declared maximum rejects the request. */
function grantedLimit(requested: number, ctx: AuditRouteContext): number | SimResponse {
  if (requested > ctx.maxLimit) {
    if (ctx.overLimit === "reject") {
      // class-validator's @Max text, as the service's NestJS validation would word it.
      return badRequest([{ property: "limit", message: `limit must not be greater than ${ctx.maxLimit}` }]);
    }
    return ctx.faults.clampLimit(ctx.maxLimit);
  }
  return ctx.faults.clampLimit(requested);
}

/** The list envelope, or the bad-server variants of it (lying total, repeating page, wrong shape). */
function envelope(
  request: SimRequest,
  ctx: AuditRouteContext,
  page: { number: number; limit: number; total: number; data: unknown[] },
): SimResponse {
  const faults = ctx.faults.active;
  let total = page.total;
  if (faults.endlessFreshIds) {
    total += (page.number - 1) * page.limit;
  } else if (faults.repeatingPage) {
    total = REPEATING_TOTAL;
    ctx.counters.fault("repeatingPage");
  } else if (faults.lyingTotal > 0) {
    total += faults.lyingTotal;
    ctx.counters.fault("lyingTotal");
  }
  if (faults.wrongEnvelope) {
    ctx.counters.fault("wrongEnvelope");
    // Valid JSON, a 200 and the records, but not in the shape of a list response.
    return { status: 200, body: { message: AUDIT_LOGS_MESSAGE, results: page.data, count: total } };
  }
  return {
    status: 200,
    body: {
      message: AUDIT_LOGS_MESSAGE,
      data: page.data,
      pagination: {
        itemsPerPage: page.limit,
        pageNumber: page.number,
        totalItems: total,
        ...links(request, ctx.linkStyle, page.number, page.limit, total),
      },
    },
  };
}

export function handleAuditLogs(request: SimRequest, ctx: AuditRouteContext): SimResponse {
  ctx.counters.query(request.query.toString());
  const parsed = parseQuery(request.query);
  if (Array.isArray(parsed)) return badRequest(parsed);

  const limit = grantedLimit(parsed.limit, ctx);
  if (typeof limit !== "number") return limit;
  const inserted = ctx.faults.headInsert(parsed.page);
  if (inserted > 0) {
    ctx.insertAtHead(inserted);
    ctx.counters.fault("headInsert", inserted);
  }

  const query: AuditQuery = {
    ...windowOf(parsed, ctx.clock, ctx.now()),
    sortKey: parsed.sortKey as SortKey,
    sortOrder: parsed.sortOrder,
  };
  if (parsed.id !== undefined) query.name = parsed.id;
  if (parsed.tags !== undefined) query.tags = parsed.tags;
  if (parsed.actionTypes !== undefined) query.actionTypes = parsed.actionTypes;
  if (parsed.latestID !== undefined) query.latestID = parsed.latestID;

  const mutationPick = ctx.faults.mutation();
  if (mutationPick !== undefined) {
    // Pick by position: O(log n) for the window, not a copy of it.
    const { total } = ctx.store.query(query, 0, 0);
    const victim = ctx.store.query(query, Math.floor(mutationPick * total), 1).items[0];
    if (victim !== undefined) {
      ctx.store.mutate(victim.id, { changeLog: `${victim.changeLog} (edited)` });
      ctx.counters.fault("mutate");
    }
  }

  // The repeating page serves page 1 whatever page is asked for.
  const offset = ctx.faults.active.repeatingPage ? 0 : (parsed.page - 1) * limit;
  const result = ctx.store.query(query, offset, limit);
  const data = result.items.map((record) => {
    const rendered: Record<string, unknown> = ctx.store.render(record);
    const kind = ctx.faults.malformedKind(record.id);
    if (kind === undefined) return rendered;
    ctx.counters.fault("malformed");
    const broken = { ...rendered };
    MALFORMATIONS[kind]!(broken);
    return broken;
  });
  if (ctx.faults.active.endlessFreshIds) data.push(...endlessRecords(ctx, query, limit - data.length));
  return envelope(request, ctx, { number: parsed.page, limit, total: result.total, data });
}

/** `count` made-up records of fresh ids for the endless mode: copies of the window's newest record. */
function endlessRecords(ctx: AuditRouteContext, query: AuditQuery, count: number): Record<string, unknown>[] {
  const template = ctx.store.query(query, 0, 1).items[0];
  if (template === undefined || count <= 0) return [];
  const rendered: Record<string, unknown> = ctx.store.render(template);
  return Array.from({ length: count }, () => {
    const n = ctx.counters.snapshotFault("endlessFreshIds");
    ctx.counters.fault("endlessFreshIds");
    return { ...rendered, id: `${ENDLESS_ID_PREFIX}${n.toString(16).padStart(16, "0")}` };
  });
}
