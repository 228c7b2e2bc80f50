// Real receivers for the SIEM sink tests, on 127.0.0.1 only: an HTTP server speaking Splunk's HTTP Event
// Collector protocol (token check, 503 back-pressure, indexer acknowledgement), a plain NDJSON intake, one
// that answers each request as the test says, and Debian's rsyslog (installed when missing, as the test
// command does for PostgreSQL).
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { freePort } from "../helpers/ports.ts";

async function bodyOf(req: IncomingMessage): Promise<{ text: string; gzipped: boolean }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const gzipped = req.headers["content-encoding"] === "gzip";
  return { text: (gzipped ? gunzipSync(raw) : raw).toString("utf8"), gzipped };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const closeOf = (server: Server) => () =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** Concatenated JSON objects (HEC's batch format), whitespace between them allowed. */
function concatenated(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") {
      if (depth === 0) start = i;
      depth += 1;
    } else if (c === "}") {
      depth -= 1;
      if (depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return out;
}

export interface HecEvent {
  time?: number;
  host: string;
  source: string;
  sourcetype: string;
  index?: string;
  fields: { flagtrail_id: string };
  event: Record<string, unknown>;
}

export interface HecReceiver {
  url: string;
  token: string;
  /** "up", "busy" (503 code 9 to every event POST), or "down" (connections refused: the server is closed). */
  mode: "up" | "busy";
  /** Polls answered false before an ackId turns true. */
  ackAfterPolls: number;
  /** Event POSTs, whatever their answer; `gzipped` whether the body was. */
  posts: { status: number; gzipped: boolean; channel: string | undefined }[];
  /** Events whose ackId was reported true: what Splunk has indexed, in order. */
  indexed: HecEvent[];
  /** Every event of every accepted POST, acknowledged or not (a batch sent again appears twice). */
  received: HecEvent[];
  /** Batches from this ackId on are never acknowledged (an indexer that stalls). */
  stallFromAck: number;
  ackPolls: number;
  close(): Promise<void>;
}

const hecAnswer = (status: number, text: string, code: number, extra: object = {}) => ({
  status,
  body: JSON.stringify({ text, code, ...extra }),
});

export async function startHec(token: string): Promise<HecReceiver> {
  const receiver = {
    token,
    mode: "up",
    ackAfterPolls: 1,
    posts: [],
    indexed: [],
    received: [],
    stallFromAck: Number.POSITIVE_INFINITY,
    ackPolls: 0,
  } as unknown as HecReceiver;
  let nextAck = 0;
  const pending = new Map<number, { events: HecEvent[]; polls: number }>();
  const answer = async (req: IncomingMessage) => {
    const { text, gzipped } = await bodyOf(req);
    const auth = String(req.headers.authorization ?? "");
    const channel = req.headers["x-splunk-request-channel"] as string | undefined;
    if (!auth) return hecAnswer(401, "Token is required", 2);
    if (auth !== `Splunk ${token}`) return hecAnswer(403, "Invalid token", 4);
    if (!channel) return hecAnswer(400, "Data channel is missing", 10);
    if (req.url === "/services/collector/ack") {
      receiver.ackPolls += 1;
      const acks: Record<string, boolean> = {};
      for (const id of (JSON.parse(text) as { acks: number[] }).acks) {
        const batch = pending.get(id);
        if (batch && batch.polls >= receiver.ackAfterPolls && id < receiver.stallFromAck) {
          receiver.indexed.push(...batch.events);
          pending.delete(id);
          acks[String(id)] = true;
        } else {
          if (batch) batch.polls += 1;
          acks[String(id)] = false;
        }
      }
      return { status: 200, body: JSON.stringify({ acks }) };
    }
    if (req.url !== "/services/collector/event")
      return hecAnswer(404, "The requested URL was not found", 404);
    if (receiver.mode === "busy") {
      receiver.posts.push({ status: 503, gzipped, channel });
      return hecAnswer(503, "Server is busy", 9);
    }
    receiver.posts.push({ status: 200, gzipped, channel });
    const ackId = nextAck++;
    const events = concatenated(text) as HecEvent[];
    receiver.received.push(...events);
    pending.set(ackId, { events, polls: 0 });
    return hecAnswer(200, "Success", 0, { ackId });
  };
  const server = createServer((req, res) => {
    answer(req).then(
      ({ status, body }) => res.writeHead(status, { "content-type": "application/json" }).end(body),
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  });
  receiver.url = await listen(server);
  receiver.close = closeOf(server);
  return receiver;
}

export interface NdjsonReceiver {
  url: string;
  up: boolean;
  /** More events than this in one request: 413 (Payload Too Large). */
  maxLines?: number;
  requests: {
    headers: IncomingMessage["headers"];
    gzipped: boolean;
    text: string;
    lines: string[];
    status: number;
  }[];
  close(): Promise<void>;
}

/** Any NDJSON intake (Datadog, Vector, Logstash): 202 when up, 503 when not. */
export async function startNdjson(): Promise<NdjsonReceiver> {
  const receiver = { up: true, requests: [] } as unknown as NdjsonReceiver;
  const server = createServer((req, res) => {
    bodyOf(req).then(({ text, gzipped }) => {
      const lines = text.split("\n").filter(Boolean).length;
      const status = !receiver.up
        ? 503
        : receiver.maxLines !== undefined && lines > receiver.maxLines
          ? 413
          : 202;
      receiver.requests.push({
        headers: req.headers,
        gzipped,
        text,
        lines: text.split("\n").filter(Boolean),
        status,
      });
      res.writeHead(status).end();
    });
  });
  receiver.url = `${await listen(server)}/api/v2/logs`;
  receiver.close = closeOf(server);
  return receiver;
}

/** An intake's answer to one request: a status alone, or with a JSON body. */
export type IntakeAnswer = number | { status: number; json: unknown };

export interface Intake {
  /** http://127.0.0.1:PORT, no path: each sink's url names its own. */
  url: string;
  close(): Promise<void>;
}

/** Any HTTP intake, answering each request (its path, and its body ungzipped) as `answer` says. */
export async function startIntake(
  answer: (request: { path: string; text: string }) => IntakeAnswer,
): Promise<Intake> {
  const server = createServer((req, res) => {
    bodyOf(req).then(
      ({ text }) => {
        const given = answer({ path: req.url ?? "/", text });
        if (typeof given === "number") res.writeHead(given).end();
        else
          res.writeHead(given.status, { "content-type": "application/json" }).end(JSON.stringify(given.json));
      },
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  });
  return { url: await listen(server), close: closeOf(server) };
}

/** The event ids (OCSF `unmapped.event_id`) of an NDJSON batch, in order. */
export function eventIds(text: string): string[] {
  return text
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { unmapped: { event_id: string } }).unmapped.event_id);
}

const has = (command: string) => spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;
const rsyslogd = () =>
  ["/usr/sbin/rsyslogd", "/sbin/rsyslogd"].find(existsSync) ?? (has("rsyslogd") ? "rsyslogd" : undefined);
const gtlsInstalled = () =>
  [
    "/usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_gtls.so",
    "/usr/lib/aarch64-linux-gnu/rsyslog/lmnsd_gtls.so",
  ].some(existsSync);

/**
 * rsyslogd, installed with apt-get when it is missing and we may (root, apt-get present); with TLS,
 * rsyslog-gnutls too. A string says why not: the test skips with it.
 */
export function ensureRsyslog(tls: boolean): string | null {
  if (rsyslogd() && (!tls || gtlsInstalled())) return null;
  if (!has("apt-get") || process.getuid?.() !== 0)
    return "rsyslogd is not installed and apt-get cannot install it here (needs apt-get and root)";
  const packages = tls ? ["rsyslog", "rsyslog-gnutls"] : ["rsyslog"];
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const install = () => spawnSync("apt-get", ["install", "-y", "-qq", ...packages], { env, stdio: "ignore" });
  if (install().status !== 0) {
    spawnSync("apt-get", ["update", "-qq"], { env, stdio: "ignore" });
    if (install().status !== 0) return `apt-get install ${packages.join(" ")} failed`;
  }
  return rsyslogd() && (!tls || gtlsInstalled()) ? null : `${packages.join(" ")} did not install rsyslogd`;
}

export interface Rsyslog {
  port: number;
  dir: string;
  /** TLS only: the CA (the receiver's self-signed certificate) the sink trusts. */
  caFile: string | undefined;
  /** Every message written so far, one per line, exactly as received. */
  lines(): string[];
  stop(): Promise<void>;
}

function makeCertificate(dir: string): void {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "2",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { stdio: "ignore" },
  );
}

async function accepting(port: number, child: ChildProcess, log: string): Promise<void> {
  for (let tries = 0; ; tries += 1) {
    if (child.exitCode !== null) throw new Error(`rsyslogd exited: ${readFileSync(log, "utf8")}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (ok) return;
    if (tries > 600) throw new Error("rsyslogd did not listen within a minute");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** rsyslogd in the foreground on a loopback port, writing every message unchanged to a file. */
export async function startRsyslog(tls: boolean): Promise<Rsyslog> {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-rsyslog-"));
  const port = await freePort();
  const out = join(dir, "out.log");
  if (tls) makeCertificate(dir);
  const tlsGlobal = tls
    ? ` DefaultNetstreamDriverCAFile="${dir}/cert.pem" DefaultNetstreamDriverCertFile="${dir}/cert.pem" DefaultNetstreamDriverKeyFile="${dir}/key.pem"`
    : "";
  const tlsModule = tls ? ' StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="anon"' : "";
  writeFileSync(
    join(dir, "rs.conf"),
    [
      // OCSF events with their diffs outgrow rsyslog's default 8k message.
      `global(workDirectory="${dir}" maxMessageSize="256k"${tlsGlobal})`,
      `module(load="imtcp"${tlsModule})`,
      `input(type="imtcp" address="127.0.0.1" port="${port}" ruleset="ft")`,
      'template(name="raw" type="string" string="%rawmsg%\\n")',
      `ruleset(name="ft") { action(type="omfile" file="${out}" template="raw") }`,
      "",
    ].join("\n"),
  );
  const log = join(dir, "rsyslogd.log");
  writeFileSync(log, "");
  const child = spawn(rsyslogd()!, ["-n", "-f", join(dir, "rs.conf"), "-i", join(dir, "rs.pid")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr?.on("data", (chunk: Buffer) => writeFileSync(log, chunk, { flag: "a" }));
  await accepting(port, child, log);
  return {
    port,
    dir,
    caFile: tls ? join(dir, "cert.pem") : undefined,
    lines: () => (existsSync(out) ? readFileSync(out, "utf8").split("\n").filter(Boolean) : []),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Polls until `check` holds (rsyslog writes its file about a second after a message arrives). */
export async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
