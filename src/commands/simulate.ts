// `flagtrail simulate`: runs the console API simulator until SIGINT/SIGTERM. stdout carries one line,
// `listening on http://127.0.0.1:PORT`, so scripts can read the address; the key is never printed.
import { z } from "zod";
import { FlagtrailError, UsageError } from "../errors.ts";
import type { FaultsInput, SimulatorOptions } from "../simulator/index.ts";
import { startSimulator } from "../simulator/index.ts";
import { isValidTimeZone } from "../simulator/zonedTime.ts";
import { parseOptions } from "./options.ts";

const intText = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^-?\d+$/, { message: "expected a whole number" })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { message: `must be between ${min} and ${max}` });

const rateText = z
  .string()
  .regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, { message: "expected a probability between 0 and 1" })
  .transform(Number);

const numberText = z
  .string()
  .regex(/^\d+(\.\d+)?$/, { message: "expected a positive number" })
  .transform(Number)
  .refine((n) => n > 0, { message: "must be positive" });

/** `--now` as epoch milliseconds or an ISO 8601 instant. */
const instantText = z.string().transform((text, ctx) => {
  const value = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(value)) {
    ctx.addIssue({ code: "custom", message: "expected epoch milliseconds or an ISO 8601 instant" });
    return z.NEVER;
  }
  return value;
});

/** `100/10s,900/15m`: limit per window, windows in s, m or h. */
const windowsText = z.string().transform((text, ctx) => {
  const windows = [];
  for (const part of text.split(",")) {
    const found = /^(\d+)\/(\d+)(ms|s|m|h)$/.exec(part.trim());
    if (found === null || Number(found[1]) < 1 || Number(found[2]) < 1) {
      ctx.addIssue({ code: "custom", message: `expected LIMIT/WINDOW like 100/10s,900/15m, got "${part}"` });
      return z.NEVER;
    }
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[found[3] as "ms" | "s" | "m" | "h"];
    windows.push({ limit: Number(found[1]), windowMs: Number(found[2]) * unit });
  }
  return windows;
});

export const simulateOptionsSchema = z.object({
  host: z.string().min(1),
  port: intText(0, 65_535),
  apiKey: z.string().min(1).optional(),
  authHeader: z.string().min(1).optional(),
  serverSecret: z.string().min(1).optional(),
  seed: intText(-2_147_483_648, 4_294_967_295),
  idSeed: intText(-2_147_483_648, 4_294_967_295).optional(),
  records: intText(0, 5_000_000),
  days: numberText,
  tz: z.string().refine(isValidTimeZone, { message: "unknown IANA time zone" }),
  dateStyle: z.enum(["short", "long"]),
  linkStyle: z.enum(["host", "relative"]),
  now: instantText.optional(),
  maxPageSize: intText(1).optional(),
  maxLimit: intText(1).optional(),
  overLimit: z.enum(["clamp", "reject"]).optional(),
  rateLimit: z.boolean().default(false),
  rateLimitWindows: windowsText.optional(),
  retryAfter: z.boolean().default(true),
  errorRate: rateText.optional(),
  latency: intText(0).optional(),
  jitter: intText(0).optional(),
  resetRate: rateText.optional(),
  truncateRate: rateText.optional(),
  malformedRate: rateText.optional(),
  mutateRate: rateText.optional(),
  headInsertRate: rateText.optional(),
  headInsertCount: intText(1).optional(),
  errorStatus: z
    .enum(["500", "502", "503", "504"], { message: "expected 500, 502, 503 or 504" })
    .transform((text) => Number(text) as 500 | 502 | 503 | 504)
    .optional(),
  throttleRate: rateText.optional(),
  nonJsonRate: rateText.optional(),
  htmlErrorRate: rateText.optional(),
  wrongEnvelope: z.boolean().optional(),
  lyingTotal: intText(0).optional(),
  repeatingPage: z.boolean().optional(),
  endlessFreshIds: z.boolean().optional(),
});
type SimulateCliOptions = z.infer<typeof simulateOptionsSchema>;

/** Maps the validated flags onto startSimulator's options. */
export function simulatorOptionsFromFlags(o: SimulateCliOptions): SimulatorOptions {
  const faults: FaultsInput = {};
  if (o.rateLimit || o.rateLimitWindows !== undefined) {
    faults.rateLimit = {
      retryAfter: o.retryAfter,
      ...(o.rateLimitWindows === undefined ? {} : { windows: o.rateLimitWindows }),
    };
  } else if (!o.retryAfter) {
    throw new UsageError("--no-retry-after: only meaningful with --rate-limit");
  }
  if (o.errorRate !== undefined) faults.errorRate = o.errorRate;
  if (o.latency !== undefined) faults.latencyMs = o.latency;
  if (o.jitter !== undefined) faults.jitterMs = o.jitter;
  if (o.resetRate !== undefined) faults.resetRate = o.resetRate;
  if (o.truncateRate !== undefined) faults.truncateRate = o.truncateRate;
  if (o.malformedRate !== undefined) faults.malformedRate = o.malformedRate;
  if (o.mutateRate !== undefined) faults.mutateRate = o.mutateRate;
  if (o.headInsertRate !== undefined) faults.headInsertRate = o.headInsertRate;
  if (o.headInsertCount !== undefined) faults.headInsertCount = o.headInsertCount;
  if (o.errorStatus !== undefined) faults.errorStatus = o.errorStatus;
  if (o.throttleRate !== undefined) faults.throttleRate = o.throttleRate;
  if (o.nonJsonRate !== undefined) faults.nonJson200Rate = o.nonJsonRate;
  if (o.htmlErrorRate !== undefined) faults.htmlErrorRate = o.htmlErrorRate;
  if (o.wrongEnvelope !== undefined) faults.wrongEnvelope = o.wrongEnvelope;
  if (o.lyingTotal !== undefined) faults.lyingTotal = o.lyingTotal;
  if (o.repeatingPage !== undefined) faults.repeatingPage = o.repeatingPage;
  if (o.endlessFreshIds !== undefined) faults.endlessFreshIds = o.endlessFreshIds;
  return {
    host: o.host,
    port: o.port,
    seed: o.seed,
    ...(o.idSeed === undefined ? {} : { idSeed: o.idSeed }),
    records: o.records,
    days: o.days,
    timeZone: o.tz,
    dateStyle: o.dateStyle,
    linkStyle: o.linkStyle,
    faults,
    ...(o.apiKey === undefined ? {} : { apiKey: o.apiKey }),
    ...(o.authHeader === undefined ? {} : { authHeader: o.authHeader }),
    ...(o.serverSecret === undefined ? {} : { serverSecret: o.serverSecret }),
    ...(o.now === undefined ? {} : { now: o.now }),
    ...(o.maxPageSize === undefined ? {} : { maxPageSize: o.maxPageSize }),
    ...(o.maxLimit === undefined ? {} : { maxLimit: o.maxLimit }),
    ...(o.overLimit === undefined ? {} : { overLimit: o.overLimit }),
  };
}

/** A bind failure (busy port, privileged port, unknown address) as one sentence, not a stack trace. */
function listenError(error: unknown, raw: Record<string, unknown>): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if ((error as NodeJS.ErrnoException).syscall !== "listen" || code === undefined) return error;
  const reason =
    code === "EADDRINUSE"
      ? "another process uses that port; choose another --port, or 0 for any free one"
      : code === "EACCES"
        ? "no permission to bind that port (below 1024 needs privileges)"
        : "the address cannot be bound here; check --host";
  return new FlagtrailError(
    `Cannot listen on ${String(raw.host)}:${String(raw.port)} (${code}): ${reason}.`,
    {
      cause: error,
    },
  );
}

export async function action(raw: Record<string, unknown>): Promise<void> {
  const options = simulatorOptionsFromFlags(parseOptions(simulateOptionsSchema, raw));
  const sim = await startSimulator(options).catch((error: unknown) => {
    throw listenError(error, raw);
  });
  process.stdout.write(`listening on ${sim.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await sim.close();
}
