// The slack and exec sinks, in process, against a real HTTP receiver and real child processes: each
// alert reaches its sink once, a failure (HTTP 500, exit 3, a timeout, a missing program) keeps it in
// the outbox, and nothing of a finding is ever run through a shell.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Sink } from "../../src/controls/config.ts";
import { parseControlsConfig } from "../../src/controls/config.ts";
import { deliverAlerts } from "../../src/controls/deliver.ts";
import { slackMessage } from "../../src/controls/sinks/slack.ts";
import { nextWaiverRow } from "../../src/controls/waivers.ts";
import { SinkError } from "../../src/errors.ts";
import { type NewFinding, writeCheck } from "../../src/store/controls/findings.ts";
import { appendWaiver } from "../../src/store/controls/waivers.ts";
import { closeProjectStores, openStoreProjects, type ProjectStore } from "../../src/store/projectStores.ts";
import { freePort } from "../helpers/ports.ts";
import { alertFinding, alertPayload } from "./findingRows.ts";

const finding = (n: number, entity = `checkout_gate_${n}`): NewFinding =>
  alertFinding(n, { entity, actor: "Dana <Lee> & co" });

const payloadOf = (f: NewFinding) => alertPayload(f);

function sinksOf(sinks: unknown[]): Sink[] {
  return parseControlsConfig(JSON.stringify({ sinks }), "test.json").sinks;
}

let parts: ProjectStore[];
let dir: string;

async function plantAlerts(findings: NewFinding[], sinks: readonly Sink[]): Promise<void> {
  await writeCheck(parts[0]!.store, {
    checkedAt: Date.now(),
    periodStart: 0,
    periodEnd: Date.now(),
    lastSeq: 0,
    periodGiven: false,
    findings,
    tickets: [],
    alertsFor: (f) => sinks.map((s) => ({ sink: s.name, payload: payloadOf(f) })),
  });
}

async function outbox() {
  const { queriesOf, sql } = await import("../../src/store/query.ts");
  const q = await queriesOf(parts[0]!.store);
  return q.all<{
    finding_id: string;
    sink: string;
    attempts: number;
    delivered_at: number | null;
    last_error: string | null;
  }>(
    sql`SELECT finding_id, sink, attempts, delivered_at, last_error FROM control_outbox ORDER BY finding_id, sink`,
  );
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "flagtrail-sinks-"));
  parts = await openStoreProjects(join(dir, "flagtrail.db"));
});

afterEach(async () => {
  await closeProjectStores(parts);
});

describe("slack sink", () => {
  let server: Server;
  let status = 200;
  const received: { text: string; headers: Record<string, unknown> }[] = [];
  let url = "";

  beforeEach(async () => {
    received.length = 0;
    status = 200;
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ ...JSON.parse(Buffer.concat(chunks).toString("utf8")), headers: req.headers });
        res.writeHead(status).end(status === 200 ? "ok" : "no_service");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/services/T000/B000/XXXXsecret`;
  });

  afterEach(async () => {
    delete process.env.TEST_SLACK_URL;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("posts one readable message per finding to the URL from the environment, once", async () => {
    const sinks = sinksOf([{ name: "chat", kind: "slack", urlEnv: "TEST_SLACK_URL", backoffSeconds: 0 }]);
    await plantAlerts([finding(1), finding(2)], sinks);
    process.env.TEST_SLACK_URL = url;
    status = 500;
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 0, failed: 2 });
    const failed = await outbox();
    // A 500 is the receiver's as a whole: the second alert is not sent this run, it waits with that error.
    expect(received).toHaveLength(1);
    expect(failed.map((r) => [r.delivered_at, r.last_error, Number(r.attempts)])).toEqual([
      [null, "HTTP 500", 1],
      [null, "HTTP 500", 1],
    ]);
    status = 200;
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 2, failed: 0 });
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 0, failed: 0 });
    expect(received).toHaveLength(3);
    expect(received[1]!.text).toBe(
      "[high] rr (review-required), project default: change without an approved review before it\n" +
        "gate_update of checkout_gate_1 by Dana &lt;Lee&gt; &amp; co at 2026-11-20T03:04:05.000+00:00\n" +
        "finding rr:rec1",
    );
    expect(received[2]!.text).toContain("finding rr:rec2");
    // The URL is the secret: in no error, no row.
    expect(JSON.stringify(await outbox())).not.toContain("XXXXsecret");
  });

  it("without its environment variable, fails and keeps the alert", async () => {
    const sinks = sinksOf([{ name: "chat", kind: "slack", urlEnv: "TEST_SLACK_URL" }]);
    await plantAlerts([finding(1)], sinks);
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 0, failed: 1 });
    expect((await outbox())[0]!.last_error).toBe("the environment variable TEST_SLACK_URL is not set");
    expect(received).toHaveLength(0);
  });

  it("an evidence finding (no entity, actor or time) is one line and its id", () => {
    const text = slackMessage({
      id: "complete:day-2026-11-20",
      control: "complete",
      kind: "completeness",
      severity: "high",
      project: "eu",
      entity: null,
      actionType: null,
      occurredAt: null,
      actor: null,
      message: "server day 2026-11-20 is not reconciled",
    });
    expect(text).toBe(
      "[high] complete (completeness), project eu: server day 2026-11-20 is not reconciled\nfinding complete:day-2026-11-20",
    );
  });
});

describe("exec sink", () => {
  /** A receiver program: appends its stdin and FLAGTRAIL_FINDING_ID to a file, exits with its first argument. */
  const script = (body: string) => {
    const path = join(dir, `sink-${Math.random().toString(36).slice(2)}.mjs`);
    writeFileSync(path, body);
    return path;
  };
  const recorder = () =>
    script(`
      import { appendFileSync } from "node:fs";
      let input = "";
      process.stdin.setEncoding("utf8").on("data", (c) => { input += c; }).on("end", () => {
        appendFileSync(process.argv[2], JSON.stringify({ id: process.env.FLAGTRAIL_FINDING_ID, input, args: process.argv.slice(3) }) + "\\n");
        process.exit(Number(process.argv[3] ?? 0));
      });
    `);
  const lines = (file: string) =>
    existsSync(file)
      ? readFileSync(file, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { id: string; input: string; args: string[] })
      : [];

  it("runs the command per alert with the JSON on stdin; exit 0 delivers, once", async () => {
    const log = join(dir, "received.jsonl");
    const sinks = sinksOf([
      { name: "pager", kind: "exec", command: process.execPath, args: [recorder(), log, "0"] },
    ]);
    await plantAlerts([finding(1), finding(2)], sinks);
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 2, failed: 0 });
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 0, failed: 0 });
    const got = lines(log);
    expect(got.map((g) => g.id)).toEqual(["rr:rec1", "rr:rec2"]);
    expect(JSON.parse(got[0]!.input)).toEqual(JSON.parse(payloadOf(finding(1))));
    expect((await outbox()).every((r) => r.delivered_at !== null && Number(r.attempts) === 1)).toBe(true);
  });

  // h42: an alert queued before its finding was waived went out with "waiver": null.
  it("an alert carries the waiver in force when it is sent, not the one when it was queued", async () => {
    const log = join(dir, "received.jsonl");
    const sinks = sinksOf([
      { name: "pager", kind: "exec", command: process.execPath, args: [recorder(), log, "0"] },
    ]);
    await plantAlerts([finding(1), finding(2)], sinks);
    const at = Date.parse("2026-11-21T08:00:00Z");
    await appendWaiver(parts[0]!.store, (previous) =>
      nextWaiverRow(previous, {
        finding_id: "rr:rec1",
        action: "waive",
        reason: "hotfix INC-42",
        by_name: "Dana Lee",
        expires: null,
        created_at: at,
      }),
    );
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 2, failed: 0 });
    const got = lines(log).map((g) => JSON.parse(g.input) as { finding: { id: string; waiver: unknown } });
    // As every time of the finding: ISO 8601 with the offset spelt out.
    const waiver = {
      by: "Dana Lee",
      reason: "hotfix INC-42",
      at: "2026-11-21T08:00:00.000+00:00",
      expires: null,
    };
    expect(got.map((g) => [g.finding.id, g.finding.waiver])).toEqual([
      ["rr:rec1", waiver],
      ["rr:rec2", null],
    ]);
    // Only the waiver changes: the rest is the body queued, key for key.
    expect(lines(log)[0]!.input).toBe(
      payloadOf(finding(1)).replace('"waiver":null', `"waiver":${JSON.stringify(waiver)}`),
    );
    expect(slackMessage(JSON.parse(lines(log)[0]!.input).finding).split("\n")).toContain(
      "waived by Dana Lee: hotfix INC-42",
    );
  });

  it("a non-zero exit, a timeout or a missing program is a failed delivery, tried again later", async () => {
    const log = join(dir, "received.jsonl");
    const sinks = sinksOf([
      {
        name: "exit3",
        kind: "exec",
        command: process.execPath,
        args: [recorder(), log, "3"],
        backoffSeconds: 0,
      },
      {
        name: "slow",
        kind: "exec",
        command: process.execPath,
        args: [script("setInterval(() => {}, 1000);")],
        timeoutSeconds: 0.5,
        backoffSeconds: 0,
      },
      { name: "missing", kind: "exec", command: join(dir, "no-such-program"), backoffSeconds: 0 },
    ]);
    await plantAlerts([finding(1)], sinks);
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 0, failed: 3 });
    expect((await outbox()).map((r) => [r.sink, r.last_error, r.delivered_at])).toEqual([
      ["exit3", "exit 3", null],
      ["missing", `cannot run ${join(dir, "no-such-program")}: ENOENT`, null],
      ["slow", "timed out after 0.5 s", null],
    ]);
    expect(lines(log)).toHaveLength(1);
    await deliverAlerts(parts[0]!.store, sinks, Date.now());
    expect((await outbox()).map((r) => Number(r.attempts))).toEqual([2, 2, 2]);
  });

  it("a non-zero exit fails that alert alone; a timeout stops the sink for the run, the rest marked with it", async () => {
    const log = join(dir, "received.jsonl");
    const started = join(dir, "started.log");
    const sinks = sinksOf([
      { name: "exit3", kind: "exec", command: process.execPath, args: [recorder(), log, "3"] },
      {
        name: "slow",
        kind: "exec",
        // sh starts in a few ms (node would need longer than the timeout on a loaded machine); `exec`
        // makes the killed process the sleeper itself, so that none is left behind.
        command: "/bin/sh",
        args: ["-c", 'echo started >> "$0"; exec sleep 60', started],
        timeoutSeconds: 1,
      },
    ]);
    await plantAlerts([finding(1), finding(2), finding(3)], sinks);
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 0, failed: 6 });
    // Each alert's own verdict: all three run.
    expect(lines(log).map((l) => l.id)).toEqual(["rr:rec1", "rr:rec2", "rr:rec3"]);
    // One timeout, then nothing more to that program this run.
    expect(readFileSync(started, "utf8")).toBe("started\n");
    expect((await outbox()).map((r) => [r.sink, r.last_error, Number(r.attempts), r.delivered_at])).toEqual([
      ["exit3", "exit 3", 1, null],
      ["slow", "timed out after 1 s", 1, null],
      ["exit3", "exit 3", 1, null],
      ["slow", "timed out after 1 s", 1, null],
      ["exit3", "exit 3", 1, null],
      ["slow", "timed out after 1 s", 1, null],
    ]);
  });

  it("a timeout kills what the program started too, not the program alone", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const sinks = sinksOf([
      {
        name: "script",
        kind: "exec",
        command: "/bin/sh",
        // A script that starts a long child and waits for it, as a pager script waits for its curl.
        args: ["-c", 'sleep 60 & echo $! > "$0"; wait', pidFile],
        timeoutSeconds: 1,
      },
    ]);
    await plantAlerts([finding(1)], sinks);
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 0, failed: 1 });
    const pid = Number(readFileSync(pidFile, "utf8"));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await vi.waitUntil(() => !alive(), { timeout: 30_000, interval: 20 });
    expect(alive()).toBe(false);
  });

  it("runs the program without flagtrail's secrets or any the config names, ordinary variables kept", async () => {
    const dump = join(dir, "env.json");
    const printer = script(`
      import { writeFileSync } from "node:fs";
      writeFileSync(process.argv[2], JSON.stringify(process.env));
    `);
    const secrets: Record<string, string> = {
      FLAGTRAIL_API_KEY: "console-secret-api-key",
      FLAGTRAIL_SIGNING_KEY: "secret-signing-key",
      FLAGTRAIL_SIGNING_KEY_PREVIOUS: "secret-previous-signing-key",
      FLAGTRAIL_DB: "postgres://flagtrail:db-password@db.example.com/flagtrail",
      PGPASSWORD: "pg-password",
      EU_CONSOLE_KEY: "console-secret-eu-key",
      TEST_HOOK_SECRET: "hook-secret",
      TEST_CHAT_URL: "https://hooks.slack.com/services/T/B/secret",
      TEST_HEC_TOKEN: "hec-token",
      TEST_DD_KEY: "dd-api-key",
    };
    const config = {
      projects: { eu: { apiKeyEnv: "EU_CONSOLE_KEY" } },
      sinks: [
        { name: "hook", kind: "webhook", url: "http://127.0.0.1:9/", secretEnv: "TEST_HOOK_SECRET" },
        { name: "chat", kind: "slack", urlEnv: "TEST_CHAT_URL" },
        { name: "hec", kind: "splunk-hec", url: "http://127.0.0.1:9/", tokenEnv: "TEST_HEC_TOKEN" },
        { name: "dd", kind: "http", url: "http://127.0.0.1:9/", headersEnv: { "DD-API-KEY": "TEST_DD_KEY" } },
        { name: "pager", kind: "exec", command: process.execPath, args: [printer, dump] },
      ],
    };
    const sinks = parseControlsConfig(JSON.stringify(config), "test.json").sinks;
    const saved = { ...process.env };
    Object.assign(process.env, secrets, { TEST_ORDINARY: "kept" });
    try {
      await plantAlerts(
        [finding(1)],
        sinks.filter((s) => s.name === "pager"),
      );
      expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 1, failed: 0 });
    } finally {
      for (const name of [...Object.keys(secrets), "TEST_ORDINARY"]) delete process.env[name];
      Object.assign(process.env, saved);
    }
    const env = JSON.parse(readFileSync(dump, "utf8")) as Record<string, string>;
    expect(Object.keys(env).filter((name) => name in secrets)).toEqual([]);
    const text = JSON.stringify(env);
    expect(Object.values(secrets).filter((value) => text.includes(value))).toEqual([]);
    expect(env).toMatchObject({
      PATH: process.env.PATH,
      TEST_ORDINARY: "kept",
      FLAGTRAIL_FINDING_ID: "rr:rec1",
    });
  });

  it("never runs through a shell: a finding's text and the arguments stay text", async () => {
    const log = join(dir, "received.jsonl");
    const marker = join(dir, "pwned");
    const sinks = sinksOf([
      {
        name: "pager",
        kind: "exec",
        command: process.execPath,
        args: [recorder(), log, "0", `$(touch ${marker})`, `; touch ${marker}`],
      },
    ]);
    await plantAlerts([finding(1, `x$(touch ${marker})\`touch ${marker}\``)], sinks);
    expect(await deliverAlerts(parts[0]!.store, sinks, Date.now())).toEqual({ delivered: 1, failed: 0 });
    expect(existsSync(marker)).toBe(false);
    expect(lines(log)[0]!.args).toEqual(["0", `$(touch ${marker})`, `; touch ${marker}`]);
  });
});

afterAll(() => {
  delete process.env.TEST_SLACK_URL;
});

describe("sink config", () => {
  const problem = (sink: unknown) => {
    try {
      sinksOf([sink]);
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it("refuses an unknown kind, an unknown field, a URL in the config, a shell string", () => {
    expect(problem({ name: "x", kind: "pagerduty" })).toBe(
      'test.json: sink "x": kind: must be one of webhook, slack, exec, splunk-hec, http, syslog.',
    );
    expect(
      problem({
        name: "chat",
        kind: "slack",
        urlEnv: "SLACK_URL",
        url: "https://hooks.slack.com/services/T/B/X",
      }),
    ).toBe('test.json: sink "chat": unknown field url.');
    expect(problem({ name: "chat", kind: "slack" })).toMatch(/^test\.json: sink "chat": urlEnv: /);
    expect(
      problem({ name: "mail", kind: "exec", command: "mail", args: "-s finding x@example.com" }),
    ).toMatch(/^test\.json: sink "mail": args: /);
    expect(problem({ name: "mail", kind: "exec", command: "mail", timeoutSeconds: 0 })).toMatch(
      /^test\.json: sink "mail": timeoutSeconds: /,
    );
    expect(sinksOf([{ name: "mail", kind: "exec", command: "mail" }])[0]).toEqual({
      name: "mail",
      kind: "exec",
      command: "mail",
      args: [],
      timeoutSeconds: 30,
      backoffSeconds: 60,
      hiddenEnv: [],
    });
  });
});

describe("check --notify's sentence about what waits", () => {
  it("names each sink once, with the reason its outbox rows keep apart from the name", async () => {
    const sinks = sinksOf([
      { name: "chat", kind: "slack", urlEnv: "TEST_SLACK_URL_UNSET" },
      { name: "hook", kind: "webhook", url: "http://127.0.0.1:9/x", secretEnv: "TEST_HOOK_SECRET_UNSET" },
      { name: "siem", kind: "http", url: `http://127.0.0.1:${await freePort()}/in`, retries: 0 },
    ]);
    await plantAlerts([finding(1)], sinks);
    const { notifyFindings } = await import("../../src/controls/cycle.ts");
    const { undelivered: sentence, busy } = await notifyFindings(parts, sinks);
    expect(busy).toEqual([]);
    // The rows name their sink in a column of their own: the error is the reason alone.
    expect((await outbox()).map((r) => [r.sink, r.last_error])).toEqual([
      ["chat", "the environment variable TEST_SLACK_URL_UNSET is not set"],
      ["hook", "the environment variable TEST_HOOK_SECRET_UNSET is not set"],
      ["siem", "could not be reached (ECONNREFUSED)"],
    ]);
    expect(sentence).toBe(
      '3 alerts wait undelivered in the outbox: 1 for sink "chat" (the environment variable ' +
        'TEST_SLACK_URL_UNSET is not set), 1 for sink "hook" (the environment variable TEST_HOOK_SECRET_UNSET ' +
        'is not set), 1 for sink "siem" (could not be reached (ECONNREFUSED)); the next delivery tries again',
    );
  });

  it("an older row's error, the whole sentence naming its sink, is read as its reason (status and the sentence)", async () => {
    const sinks = sinksOf([
      { name: "chat", kind: "slack", urlEnv: "TEST_SLACK_URL_UNSET" },
      { name: "hook", kind: "webhook", url: "http://127.0.0.1:9/x", secretEnv: "TEST_HOOK_SECRET_UNSET" },
      { name: "siem", kind: "http", url: "http://127.0.0.1:9/in", retries: 0 },
    ]);
    await plantAlerts([finding(1)], sinks);
    // As flagtrail kept them before the reason was stored apart, not due yet (no delivery rewrites them).
    const legacy: [string, string][] = [
      ["chat", "sink chat: the environment variable TEST_SLACK_URL_UNSET is not set"],
      ["hook", 'sink "hook": cannot read a secret from its secretFile.'],
      ["siem", 'sink "siem" could not be reached (ECONNREFUSED).'],
    ];
    const { queriesOf, sql } = await import("../../src/store/query.ts");
    const q = await queriesOf(parts[0]!.store);
    for (const [sink, error] of legacy) {
      await q.run(sql`UPDATE control_outbox SET attempts = 1, last_error = ${error},
        next_attempt_at = ${Date.now() + 3_600_000} WHERE sink = ${sink}`);
    }
    const { controlsStatusText, readControlsStatus } = await import("../../src/controls/status.ts");
    const status = await readControlsStatus(parts[0]!.store);
    expect(status.undelivered).toEqual([
      { sink: "chat", alerts: 1, lastError: "the environment variable TEST_SLACK_URL_UNSET is not set" },
      { sink: "hook", alerts: 1, lastError: "cannot read a secret from its secretFile" },
      { sink: "siem", alerts: 1, lastError: "could not be reached (ECONNREFUSED)" },
    ]);
    expect(controlsStatusText(status).split("\n")[1]).toBe(
      'Alerts: 3 undelivered (sink "chat" 1, last error: the environment variable TEST_SLACK_URL_UNSET is not set; ' +
        'sink "hook" 1, last error: cannot read a secret from its secretFile; ' +
        'sink "siem" 1, last error: could not be reached (ECONNREFUSED))',
    );
    const { notifyFindings } = await import("../../src/controls/cycle.ts");
    expect((await notifyFindings(parts, sinks)).undelivered).toBe(
      '3 alerts wait undelivered in the outbox: 1 for sink "chat" (the environment variable ' +
        'TEST_SLACK_URL_UNSET is not set), 1 for sink "hook" (cannot read a secret from its secretFile), ' +
        '1 for sink "siem" (could not be reached (ECONNREFUSED)); the next delivery tries again',
    );
    // Read as it is, the row itself unchanged.
    expect((await outbox()).map((r) => [r.sink, r.last_error])).toEqual(legacy);
  });

  it("a SinkError keeps its reason apart from the sentence that names the sink", () => {
    const verb = new SinkError("siem", "could not be reached (ECONNREFUSED)", true);
    expect([verb.message, verb.reason, verb.sink]).toEqual([
      'sink "siem" could not be reached (ECONNREFUSED).',
      "could not be reached (ECONNREFUSED)",
      "siem",
    ]);
    const clause = new SinkError("a: b", "cannot read its caFile", false, "clause");
    expect([clause.message, clause.reason]).toEqual([
      'sink "a: b": cannot read its caFile.',
      "cannot read its caFile",
    ]);
  });
});
