// The sync engine's options, their defaults and their checks (the one place for each), and what a run
// reports back. Messages name the setting, never a command-line flag: only the commands know flags.
import { z } from "zod";
import { type Setting, SettingError, UsageError } from "../errors.ts";
import type { TimeParser } from "../records/prepare.ts";
import type { RunCounters } from "../store/syncStore.ts";
import { defaultUntil, isDay } from "./days.ts";
import { SYNC_DEFAULTS } from "./defaults.ts";
import type { EntitySummary } from "./entities.ts";

export { SYNC_DEFAULTS };

const int = (what: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .number({ error: `${what} must be a whole number.` })
    .int({ error: `${what} must be a whole number.` })
    .min(min, { error: `${what} must be at least ${min}.` })
    .max(max, { error: `${what} must be at most ${max}.` });

/**
 * The API documents no maximum `limit` (the server says what it granted in itemsPerPage); a page is held
 * whole in memory, so ten times what flagtrail asks for by default is the most worth asking.
 */
const MAX_PAGE_SIZE = 10_000;
/** Requests in flight: the client's rate budget (100 per 10 s by default) makes more than this idle. */
const MAX_CONCURRENCY = 64;
const day = (what: string) =>
  z.string().refine(isDay, {
    error: (issue) => `${what} must be a date YYYY-MM-DD, got ${JSON.stringify(issue.input)}.`,
  });

const syncOptionsSchema = z.object({
  since: day("The start day").optional(),
  until: day("The end day").optional(),
  actionTypes: z.array(z.string().min(1)).default([]),
  /** Records asked per request; unset: the size the server granted before, else negotiated. */
  pageSize: int("The page size", 1, MAX_PAGE_SIZE).optional(),
  /** Requests in flight at once (pages of a window and windows). */
  concurrency: int("The concurrency", 1, MAX_CONCURRENCY).default(SYNC_DEFAULTS.concurrency),
  lookbackDays: int("The lookback", 0).default(SYNC_DEFAULTS.lookbackDays),
  /** Ignore the checkpoint and any interrupted plan: re-read the range. */
  full: z.boolean().default(false),
  /** Accept a start day before EARLIEST_START_DAY (a guard against typos like 2004 for 2024). */
  allowBefore2015: z.boolean().default(false),
  windowDays: int("The window length", 1).default(SYNC_DEFAULTS.windowDays),
  backfillDays: int("The backfill length", 1).default(SYNC_DEFAULTS.backfillDays),
  /** Compare local and server counts per server day (default true). */
  coverage: z.boolean().default(true),
  /** Also read config versions, layer experiments and event metrics after the audit log (issue 10). */
  entities: z.boolean().default(true),
  /**
   * Requests the entity part may make (its pages; retries come on top); what it leaves is the backlog
   * later runs read first. Unset: SYNC_DEFAULTS.entityBudgetFloor or the audit part's requests, whichever
   * is more; with `entitiesOnly`, no limit. null: no limit (a local server that shares no limits).
   */
  entityBudget: int("The entity request budget", 0).nullable().optional(),
  /** Read the entity backlog (and whatever else is due) without reading the audit log. */
  entitiesOnly: z.boolean().default(false),
  /** Events whose metrics are read (besides those read before). */
  events: z.array(z.string().min(1)).default([]),
  /** Re-read a day whose local count is below the server's total (default true). */
  repairGaps: z.boolean().default(true),
  leaseTtlMs: int("The lease time", 1000).default(SYNC_DEFAULTS.leaseTtlMs),
  batchRecords: int("The batch size", 1).default(SYNC_DEFAULTS.batchRecords),
  batchMs: int("The batch time", 0).default(SYNC_DEFAULTS.batchMs),
  /** Signs the chain head in the store (HMAC); the caller reads it (the engine reads no environment). Never stored or logged. */
  signingKey: z.string().min(1).optional(),
  /** The key the head was signed with before a rotation: accepted once, then the head is signed anew. */
  previousSigningKey: z.string().min(1).optional(),
  /** Lease holder id; defaults to this host/pid. */
  holder: z.string().min(1).optional(),
  now: z.custom<() => number>((v) => typeof v === "function").optional(),
  parseTime: z.custom<TimeParser>((v) => typeof v === "function").optional(),
  onEvent: z.custom<(event: SyncEvent) => void>((v) => typeof v === "function").optional(),
});

/** Before this day no console audit log exists: an earlier start is a typo until the caller says not. */
const EARLIEST_START_DAY = "2015-01-01";

export type SyncOptions = z.input<typeof syncOptionsSchema>;

/** The settings a refused option is named by, so that a command names its flag (src/commands/sync.ts). */
const SETTINGS: Partial<Record<PropertyKey, Setting>> = {
  since: "start day",
  until: "end day",
  pageSize: "page size",
  concurrency: "concurrency",
  lookbackDays: "lookback",
};

/** A refused option's sentence, by its setting where a command has a flag for it. */
function optionsError(issue: z.core.$ZodIssue | undefined): UsageError {
  const message = issue?.message ?? "Invalid sync options.";
  const setting = SETTINGS[issue?.path[0] ?? ""];
  return setting === undefined ? new UsageError(message) : new SettingError(setting, message);
}

export interface ResolvedSyncOptions extends z.output<typeof syncOptionsSchema> {
  until: string;
  /** The caller named the range (start or end day): an interrupted plan of another range does not win. */
  explicitRange: boolean;
  actionTypes: string[];
  now: () => number;
}

export function resolveSyncOptions(options: SyncOptions, now: () => number = Date.now): ResolvedSyncOptions {
  const parsed = syncOptionsSchema.safeParse(options);
  if (!parsed.success) throw optionsError(parsed.error.issues[0]);
  const o = parsed.data;
  const clock = o.now ?? now;
  const until = o.until ?? defaultUntil(clock());
  if (o.since !== undefined && o.since > until) {
    throw new SettingError("period", `The start day ${o.since} is after the end day ${until}.`);
  }
  // A far end day plans windows for days that cannot have records yet (2099: 892 windows), and an
  // interrupted plan of them would be resumed by later runs.
  const latest = defaultUntil(clock());
  if (until > latest) {
    throw new SettingError(
      "end day",
      `The end day ${until} is after tomorrow (${latest} in UTC): no records exist there yet.`,
    );
  }
  if (o.entitiesOnly && !o.entities) {
    throw new SettingError(
      ["entity history", "entities only"],
      "Entity history cannot be both turned off and read alone.",
    );
  }
  if (o.since !== undefined && o.since < EARLIEST_START_DAY && !o.allowBefore2015) {
    throw new SettingError(
      "start day",
      `The start day ${o.since} is before ${EARLIEST_START_DAY}, older than any console audit log; allow an earlier start explicitly if it is meant.`,
      "earlier start",
    );
  }
  return {
    ...o,
    signingKey: o.signingKey,
    previousSigningKey: o.previousSigningKey,
    until,
    explicitRange: o.since !== undefined || o.until !== undefined,
    actionTypes: [...new Set(o.actionTypes)].sort(),
    now: clock,
  };
}

export type SyncEvent =
  | { type: "notice"; message: string }
  | { type: "warning"; message: string }
  | {
      type: "progress";
      phase: "windows" | "coverage";
      done: number;
      total: number;
      fetched: number;
      inserted: number;
    }
  /** A window of the plan is fully read (its pages stored). */
  | { type: "window"; startDate: string; endDate: string; done: number; total: number }
  /** One kind of entity pass has finished: how many entities it read. */
  | { type: "entities"; pass: "configs" | "layers" | "events"; read: number };

export interface CoverageGap {
  day: string;
  local: number;
  server: number;
}

/** A run's counters (fetched, inserted, … requests, throttled, retries) plus what the run covered. */
export interface SyncSummary extends RunCounters {
  runId: number;
  outcome: "ok" | "interrupted";
  filterKey: string;
  actionTypes: string[];
  /** The range read by this run (union of a resumed plan and the new one). */
  range: { since: string; until: string };
  resumed: boolean;
  windows: number;
  /** The page size the server granted for this run. */
  pageSize: number;
  seconds: number;
  coverageDays: number;
  /** Requests spent on coverage alone (count probes; day repairs count as pages). */
  coverageRequests: number;
  coverageGaps: CoverageGap[];
  /** Checked days whose server day had not ended yet: not final, checked again by the next sync. */
  coverageOpenDays: string[];
  /** The first warnings in full (the count is in `warnings`). */
  warningMessages: string[];
  /** The entity part (null: turned off, or the client cannot read entities). */
  entities?: EntitySummary | null;
}
