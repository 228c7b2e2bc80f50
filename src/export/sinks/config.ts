// The SIEM sinks of the config's `sinks` list: where the audit records (and control findings) go as
// OCSF events. Secrets (a HEC token, an API key header) come from the environment or a file, never from
// the config. The name and env-name rules are the config's own, passed in (this file is imported by it).
import { z } from "zod";

const common = {
  /** Events per request (per connection for syslog). */
  batchSize: z.number().int().min(1).max(10_000).default(500),
  /** Tries of a batch within one delivery after a retryable failure; the next run tries again anyway. */
  retries: z.number().int().min(0).max(10).default(2),
  /** First delay between those tries (and before a finding's alert is tried again); doubles per try. */
  backoffSeconds: z.number().nonnegative().default(1),
  timeoutSeconds: z.number().positive().default(30),
  /** What the records are sent as: OCSF events (the default) or flagtrail's own JSON. */
  format: z.enum(["ocsf", "raw"]).default("ocsf"),
};

/** A sink's address. Credentials in it would be a secret in the config (and fetch refuses them). */
export const httpUrl = z
  .url({ protocol: /^https?$/, error: "url must be an http:// or https:// address" })
  .refine((url) => !/^https?:\/\/[^/?#]*@/i.test(url), {
    message: "url must not hold a user name or password: give credentials from the environment (headersEnv)",
  });

/** `tcp://host:port` or `tls://host:port`; one the URL parser refuses (port 70000, `[::::]`) fails here, not at delivery. */
const syslogMessage = "url must be tcp://host:port or tls://host:port";
const syslogUrl = z
  .string()
  .regex(/^(tcp|tls):\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, { message: syslogMessage })
  .refine((url) => URL.canParse(url) && Number(new URL(url).port) > 0, { message: syslogMessage });

export function siemSinkSchemas(name: z.ZodString, envName: z.ZodString) {
  const splunkHec = z
    .strictObject({
      name,
      kind: z.literal("splunk-hec"),
      url: httpUrl,
      tokenEnv: envName.optional(),
      tokenFile: z.string().min(1).optional(),
      index: z.string().min(1).optional(),
      sourcetype: z.string().min(1).default("ocsf:flagtrail"),
      /** Advance only once Splunk says the events are indexed (indexer acknowledgement). */
      useAck: z.boolean().default(true),
      ackTimeoutSeconds: z.number().positive().default(120),
      ...common,
    })
    .refine((s) => (s.tokenEnv === undefined) !== (s.tokenFile === undefined), {
      message: "needs exactly one of tokenEnv and tokenFile",
    });
  const http = z.strictObject({
    name,
    kind: z.literal("http"),
    url: httpUrl,
    /** Header name → the environment variable holding its value (e.g. {"DD-API-KEY": "DD_API_KEY"}). */
    headersEnv: z
      .record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { message: "not a header name" }), envName)
      .default({}),
    compress: z.boolean().default(false),
    /** Each batch as one JSON array (Datadog's logs intake wants that) instead of NDJSON lines. */
    array: z.boolean().default(false),
    ...common,
  });
  const syslog = z.strictObject({
    name,
    kind: z.literal("syslog"),
    url: syslogUrl,
    /** PEM file of the CA that signed the receiver's certificate (tls:// only; else the system's CAs). */
    caFile: z.string().min(1).optional(),
    /** HOSTNAME field of each message; the machine's name when absent. */
    hostname: z.string().min(1).optional(),
    ...common,
  });
  return [splunkHec, http, syslog] as const;
}

export const SIEM_KINDS = ["splunk-hec", "http", "syslog"] as const;
