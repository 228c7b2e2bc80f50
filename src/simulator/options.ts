// Options of startSimulator and `flagtrail simulate`, validated with zod. Defaults model the real
// service (header name, 100-record pages, Pacific time) with a history longer than the API's
// default 90-day window.
import { z } from "zod";
import { DEFAULT_AUTH_HEADER } from "../api/connection.ts";
import { isValidTimeZone } from "./zonedTime.ts";

const rate = z.number().min(0).max(1);

/** Default declared maximum of the audit log's `limit`. */
const MAX_LIMIT = 1000;

const rateLimitSchema = z.object({
  /** Sliding windows; a request is refused when any window is full. Documented: 100/10 s, 900/15 min. */
  windows: z
    .array(z.object({ limit: z.number().int().min(1), windowMs: z.number().int().min(1) }))
    .min(1)
    .default([
      { limit: 100, windowMs: 10_000 },
      { limit: 900, windowMs: 900_000 },
    ]),
  /** Send `Retry-After` (seconds) with a 429; the real service documents none. */
  retryAfter: z.boolean().default(true),
});

export const faultsSchema = z.object({
  /** Rate limiting is on when this is set. */
  rateLimit: rateLimitSchema.optional(),
  /** Probability that an API request gets a 500/502/503/504. */
  errorRate: rate.default(0),
  latencyMs: z.number().int().min(0).default(0),
  /** Extra latency drawn uniformly in [0, jitterMs]. */
  jitterMs: z.number().int().min(0).default(0),
  /** Probability that the connection is reset instead of answered. */
  resetRate: rate.default(0),
  /** Probability that a JSON body is cut in half (with a matching Content-Length). */
  truncateRate: rate.default(0),
  /**
   * Undeclared clamp of the audit log's `limit` (a fault, counted in `faults.clamp`): no 400 whatever
   * the size, fewer records served, `itemsPerPage` says how many. The declared maximum is `maxLimit`.
   */
  maxPageSize: z.number().int().min(1).optional(),
  /** Share of records served malformed (missing fields, wrong types); decided per record id. */
  malformedRate: rate.default(0),
  /** Probability, per audit log request, that one record of the window is changed under its id. */
  mutateRate: rate.default(0),
  /** Probability, per audit log request for page 2 or later, of new records at the newest end. */
  headInsertRate: rate.default(0),
  headInsertCount: z.number().int().min(1).default(5),
  // Bad-server modes (the crash and fault campaign): answers no client can page through.
  /** Status of every injected 5xx instead of a random one of 500/502/503/504 (errorRate 1 + 503: endless 503). */
  errorStatus: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).optional(),
  /** Probability that an API request gets a 429 without `Retry-After` (1: endless 429), rate limit or not. */
  throttleRate: rate.default(0),
  /** Probability that an API request gets a 200 whose body is not JSON (text/plain). */
  nonJson200Rate: rate.default(0),
  /** Probability that an API request gets a proxy's 502 HTML error page instead of a JSON error. */
  htmlErrorRate: rate.default(0),
  /** Every audit log 200 is JSON but not the list envelope (no `data` array, no `pagination`). */
  wrongEnvelope: z.boolean().default(false),
  /** Added to every audit log `totalItems` (and to the links built from it): a total the pages never reach. */
  lyingTotal: z.number().int().min(0).default(0),
  /** Every audit log page serves page 1's records, with `totalItems` 10⁹ and a `nextPage` that never ends. */
  repeatingPage: z.boolean().default(false),
  /**
   * Past the window's real records every page is filled with records of fresh ids (ENDLESS_ID_PREFIX,
   * copies of the window's newest record), and page p reports `totalItems` = real total + (p-1) × limit:
   * an honest first page, then a list that never ends and a total that keeps growing.
   */
  endlessFreshIds: z.boolean().default(false),
});
export type Faults = z.infer<typeof faultsSchema>;
export type FaultsInput = z.input<typeof faultsSchema>;

export const simulatorOptionsSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.number().int().min(0).max(65_535).default(0),
  apiKey: z.string().min(1).default("console-simulator-key"),
  /** Matched case-insensitively, like every HTTP header. */
  authHeader: z.string().min(1).default(DEFAULT_AUTH_HEADER),
  /** Expected by the event webhook in the same header. */
  serverSecret: z.string().min(1).default("secret-simulator-key"),
  seed: z.number().int().default(1),
  /**
   * Seed of the record ids alone (default: the seed). Two simulators with different seeds and one id
   * seed stand for two projects whose audit record ids overlap.
   */
  idSeed: z.number().int().optional(),
  records: z.number().int().min(0).max(5_000_000).default(5000),
  /**
   * How often the team creates dynamic configs, against the default mix (1: about one a hundred
   * records). Higher is a project that keeps many configs (a config per customer or per market), whose
   * entity reads outnumber its audit log pages.
   */
  configRate: z.number().positive().max(100).default(1),
  /** Span of the generated history, ending at `now`. */
  days: z.number().positive().max(3650).default(120),
  timeZone: z.string().refine(isValidTimeZone, { error: "unknown time zone" }).default("America/Los_Angeles"),
  dateStyle: z.enum(["short", "long"]).default("short"),
  /** Epoch ms of the simulator clock's "now" at start; the clock then runs in real time. */
  now: z.number().int().optional(),
  /** Shorthand for faults.maxPageSize. */
  maxPageSize: z.number().int().min(1).optional(),
  /**
   * The server's declared largest `limit` of the audit log. Undocumented for the real service, which
   * reports the size it used in `itemsPerPage`: 1,000 granted and reported by default (see overLimit).
   */
  maxLimit: z.number().int().min(1).default(MAX_LIMIT),
  /** Above maxLimit: `clamp` grants maxLimit and reports it in `itemsPerPage`; `reject` answers 400. */
  overLimit: z.enum(["clamp", "reject"]).default("clamp"),
  /** `host`: "127.0.0.1:PORT/console/v1/audit_logs?page=2&limit=3"; `relative`: the path with the filters copied in. */
  linkStyle: z.enum(["host", "relative"]).default("host"),
  faults: faultsSchema.prefault({}),
});
export type SimulatorOptions = z.input<typeof simulatorOptionsSchema>;
export type SimulatorSettings = z.infer<typeof simulatorOptionsSchema>;
