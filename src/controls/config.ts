// Controls as code: the `controls` and `sinks` lists of flagtrail.config.json, checked strictly (an
// unknown field is refused: a misspelt `entityPatern` would silently widen a control's scope), each
// problem named by its control's id.
import { z } from "zod";
import { UsageError } from "../errors.ts";
import { httpUrl, SIEM_KINDS, siemSinkSchemas } from "../export/sinks/config.ts";
import { parseConfigFile } from "../projects.ts";

const idSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, {
  message: "an id is 1–63 letters, digits, '.', '-' or '_', starting with a letter or digit",
});

const regexSchema = z.string().refine(
  (text) => {
    try {
      new RegExp(text);
      return true;
    } catch {
      return false;
    }
  },
  { message: "not a valid regular expression" },
);

export const SEVERITIES = ["low", "medium", "high"] as const;
export type Severity = (typeof SEVERITIES)[number];

const base = {
  id: idSchema,
  severity: z.enum(SEVERITIES),
};

/** Which changes a record control looks at: these action types, entities whose name matches. */
const scope = {
  actionTypes: z.array(z.string().min(1)).min(1).optional(),
  entityPattern: regexSchema.optional(),
};

export const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;

const zoneSchema = z.string().refine(
  (zone) => {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  },
  { message: "not an IANA time zone (e.g. Europe/Berlin)" },
);

const hoursSchema = z
  .string()
  .regex(/^([01]\d|2[0-4]):[0-5]\d-([01]\d|2[0-4]):[0-5]\d$/, { message: 'hours are "HH:MM-HH:MM"' })
  // "22:00-06:00" runs past midnight into the next day; a window must not start and end at the same time.
  .refine((h) => h.slice(0, 5) !== h.slice(6), { message: "hours must not start and end at the same time" });

/** Every kind of control, in the order the docs list them. */
export const CONTROL_KINDS = [
  "review-required",
  "no-self-approval",
  "change-window",
  "ticket-reference",
  "restricted-actor",
  "sync-freshness",
  "completeness",
  "integrity",
] as const;

const controlSchema = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({ ...base, ...scope, kind: z.literal("review-required") }),
    z.strictObject({ ...base, ...scope, kind: z.literal("no-self-approval") }),
    z.strictObject({
      ...base,
      ...scope,
      kind: z.literal("change-window"),
      days: z.array(z.enum(WEEKDAYS)).min(1),
      hours: hoursSchema,
      zone: zoneSchema,
      emergencyPattern: regexSchema.optional(),
      postReviewDays: z.number().positive().default(2),
    }),
    z.strictObject({ ...base, ...scope, kind: z.literal("ticket-reference"), pattern: regexSchema }),
    z.strictObject({
      ...base,
      ...scope,
      kind: z.literal("restricted-actor"),
      actors: z.array(z.string().min(1)).min(1),
    }),
    z.strictObject({ ...base, kind: z.literal("sync-freshness"), maxAgeHours: z.number().positive() }),
    z.strictObject({ ...base, kind: z.literal("completeness") }),
    z.strictObject({ ...base, kind: z.literal("integrity") }),
  ],
  { error: () => `must be one of ${CONTROL_KINDS.join(", ")}` },
);

export type Control = z.infer<typeof controlSchema>;
export type ControlKind = Control["kind"];
// The list and the union name the same kinds: a kind added to one only does not compile.
const sameKinds: [ControlKind, (typeof CONTROL_KINDS)[number]] extends [
  (typeof CONTROL_KINDS)[number],
  ControlKind,
]
  ? true
  : never = true;
void sameKinds;
export type RecordControl = Extract<Control, { actionTypes?: unknown }>;

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: "not an environment variable name" });

/** First retry delay after a failed delivery; doubles per attempt, at most an hour. */
const backoffSeconds = z.number().nonnegative().default(60);

const webhookSinkSchema = z
  .strictObject({
    name: idSchema,
    kind: z.literal("webhook"),
    url: httpUrl,
    secretEnv: envName.optional(),
    secretFile: z.string().min(1).optional(),
    backoffSeconds,
  })
  .refine((s) => (s.secretEnv === undefined) !== (s.secretFile === undefined), {
    message: "needs exactly one of secretEnv and secretFile",
  });

/** A Slack incoming webhook; its URL is a secret (anyone holding it can post), so it comes from the environment. */
const slackSinkSchema = z.strictObject({
  name: idSchema,
  kind: z.literal("slack"),
  urlEnv: envName,
  backoffSeconds,
});

/** A program run per alert, the alert's JSON on its stdin (mail, a pager): never through a shell. */
const execSinkSchema = z.strictObject({
  name: idSchema,
  kind: z.literal("exec"),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** A run that takes longer is killed and counts as a failed delivery. */
  timeoutSeconds: z.number().positive().default(30),
  backoffSeconds,
});

const sinkSchema = z.discriminatedUnion(
  "kind",
  [webhookSinkSchema, slackSinkSchema, execSinkSchema, ...siemSinkSchemas(idSchema, envName)],
  { error: () => "must be one of webhook, slack, exec, splunk-hec, http, syslog" },
);

type ParsedSink = z.infer<typeof sinkSchema>;
/** An exec sink with `hiddenEnv`: the variables its program is run without (secretEnvNames). */
type ExecSink = Extract<ParsedSink, { kind: "exec" }> & { hiddenEnv: readonly string[] };
export type Sink = Exclude<ParsedSink, { kind: "exec" }> | ExecSink;
export type SinkOf<K extends Sink["kind"]> = Extract<Sink, { kind: K }>;
/** The sinks that receive the records too (a cursor each), not only the findings' alerts. */
export type SiemSink = Extract<Sink, { kind: (typeof SIEM_KINDS)[number] }>;
export type AlertSink = Exclude<Sink, SiemSink>;
export const isSiemSink = (sink: Sink): sink is SiemSink =>
  (SIEM_KINDS as readonly string[]).includes(sink.kind);

export interface ControlsConfig {
  controls: Control[];
  sinks: Sink[];
}

/** `controls[2]` → `control "cc81-review"` (its id when it has one), for error messages. */
function nameOf(list: "controls" | "sinks", index: number, raw: unknown): string {
  const item = Array.isArray(raw) ? (raw[index] as Record<string, unknown> | undefined) : undefined;
  const key = list === "controls" ? "id" : "name";
  const id = item && typeof item[key] === "string" ? JSON.stringify(item[key]) : `#${index + 1}`;
  return `${list === "controls" ? "control" : "sink"} ${id}`;
}

/**
 * zod's own wording of a bad or missing value (`Invalid option: expected one of "low"|"medium"|"high"`)
 * in the words of the config's other messages; a schema's own message takes precedence.
 */
function configIssueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === "invalid_value") {
    const values = issue.values.map(String);
    const list = values.length > 1 ? `${values.slice(0, -1).join(", ")} or ${values.at(-1)}` : values[0];
    return issue.input === undefined
      ? `must be given (${list})`
      : `must be ${list}, got ${JSON.stringify(issue.input)}`;
  }
  if (issue.code === "invalid_type" && issue.input === undefined)
    return `must be given (a ${issue.expected})`;
  return undefined;
}

function parseList<T>(schema: z.ZodType<T>, list: "controls" | "sinks", raw: unknown[], file: string): T[] {
  return raw.map((item, index) => {
    const parsed = schema.safeParse(item, { error: configIssueMessage });
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    const where = nameOf(list, index, raw);
    if (issue.code === "unrecognized_keys")
      throw new UsageError(`${file}: ${where}: unknown field ${issue.keys.join(", ")}.`);
    const field = issue.path.map(String).join(".");
    throw new UsageError(`${file}: ${where}: ${field ? `${field}: ` : ""}${issue.message}.`);
  });
}

function assertUnique(names: string[], what: string, file: string): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new UsageError(`${file}: two ${what} have the id ${JSON.stringify(name)}.`);
    seen.add(name);
  }
}

/**
 * The variables the config names as holding a secret, each sink's and each project's API key's: an exec
 * sink's program is run without them (it needs none, and could log or pass on what it is given).
 */
function secretEnvNames(sinks: readonly ParsedSink[], projects: Record<string, { apiKeyEnv?: string }>) {
  const names = Object.values(projects).map((p) => p.apiKeyEnv);
  for (const sink of sinks) names.push(...sinkSecretEnv(sink));
  return names.filter((name): name is string => name !== undefined);
}

export function sinkSecretEnv(sink: ParsedSink): (string | undefined)[] {
  // Every kind says which of its fields name a secret's variable: a new kind cannot forget to.
  switch (sink.kind) {
    case "webhook":
      return [sink.secretEnv];
    case "slack":
      return [sink.urlEnv];
    case "splunk-hec":
      return [sink.tokenEnv];
    case "http":
      return Object.values(sink.headersEnv);
    case "exec":
    case "syslog":
      return [];
  }
}

/** The controls and sinks of a config file's text; every problem is a UsageError naming the control. */
export function parseControlsConfig(text: string, file: string): ControlsConfig {
  const config = parseConfigFile(text, file);
  const controls = parseList(controlSchema, "controls", config.controls ?? [], file);
  const parsed = parseList(sinkSchema, "sinks", config.sinks ?? [], file);
  const hiddenEnv = secretEnvNames(parsed, config.projects ?? {});
  const sinks = parsed.map((s): Sink => (s.kind === "exec" ? { ...s, hiddenEnv } : s));
  assertUnique(
    controls.map((c) => c.id),
    "controls",
    file,
  );
  assertUnique(
    sinks.map((s) => s.name),
    "sinks",
    file,
  );
  return { controls, sinks };
}
