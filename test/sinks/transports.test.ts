// The SIEM transports against real receivers on 127.0.0.1: a HEC server (token, back-pressure,
// indexer acknowledgement), an NDJSON intake, and rsyslog over TCP and TLS.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseControlsConfig, type SiemSink } from "../../src/controls/config.ts";
import { SinkError } from "../../src/errors.ts";
import { hecChannel, hecTransport } from "../../src/export/sinks/hec.ts";
import { httpTransport } from "../../src/export/sinks/http.ts";
import { syslogTransport } from "../../src/export/sinks/syslog.ts";
import { type SinkEvent, sendWithRetry } from "../../src/export/sinks/transport.ts";
import {
  ensureRsyslog,
  type HecReceiver,
  type NdjsonReceiver,
  type Rsyslog,
  startHec,
  startNdjson,
  startRsyslog,
  until,
} from "./receivers.ts";

const TOKEN = "hec-token-3c1d9f0b-test";

/** A sink as the config parses it (defaults filled in). */
function sinkOf<K extends SiemSink["kind"]>(
  body: Record<string, unknown> & { kind: K },
): Extract<SiemSink, { kind: K }> {
  const sink = parseControlsConfig(JSON.stringify({ sinks: [{ name: "siem", ...body }] }), "test.json")
    .sinks[0];
  return sink as Extract<SiemSink, { kind: K }>;
}

const events = (n: number, from = 0): SinkEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `default:rec${from + i}`,
    line: JSON.stringify({
      class_uid: 3004,
      time: 1_764_158_400_000 + i,
      message: `change "${from + i}"\n]`,
      severity_id: 1,
    }),
  }));

async function failureOf(promise: Promise<unknown>): Promise<SinkError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SinkError);
  return error as SinkError;
}

describe("splunk-hec", () => {
  let hec: HecReceiver;
  beforeAll(async () => {
    hec = await startHec(TOKEN);
    process.env.FT_TEST_HEC_TOKEN = TOKEN;
    process.env.FT_TEST_HEC_BAD = "not-the-token-77";
  });
  afterAll(async () => {
    delete process.env.FT_TEST_HEC_TOKEN;
    delete process.env.FT_TEST_HEC_BAD;
    await hec.close();
  });

  it("sends gzipped concatenated events on a stable channel and returns once they are acknowledged", async () => {
    hec.ackAfterPolls = 2;
    const sink = sinkOf({ kind: "splunk-hec", url: hec.url, tokenEnv: "FT_TEST_HEC_TOKEN", index: "audit" });
    await hecTransport(sink).send(events(3));
    expect(hec.posts).toEqual([{ status: 200, gzipped: true, channel: hecChannel("siem") }]);
    expect(hec.ackPolls).toBe(3);
    expect(hec.indexed).toHaveLength(3);
    expect(hec.indexed[0]).toEqual({
      time: 1_764_158_400,
      host: expect.any(String),
      source: "flagtrail",
      sourcetype: "ocsf:flagtrail",
      index: "audit",
      fields: { flagtrail_id: "default:rec0" },
      event: JSON.parse(events(1)[0]!.line),
    });
    expect(hecChannel("siem")).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(hecChannel("siem")).not.toBe(hecChannel("other"));
  });

  it("a refused token is one sentence naming the sink, never the token, and not worth retrying", async () => {
    const sink = sinkOf({ kind: "splunk-hec", url: hec.url, tokenEnv: "FT_TEST_HEC_BAD" });
    const error = await failureOf(
      sendWithRetry(hecTransport(sink), events(1), { retries: 3, backoffMs: 10 }),
    );
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('sink "siem" refused its credentials (HTTP 403, Invalid token, code 4).');
    expect(error.message).not.toContain("not-the-token");
  });

  it("back-pressure (503, code 9) is retried with backoff until the collector takes the batch", async () => {
    hec.mode = "busy";
    hec.posts.length = 0;
    hec.indexed.length = 0;
    const sink = sinkOf({ kind: "splunk-hec", url: hec.url, tokenEnv: "FT_TEST_HEC_TOKEN" });
    const error = await failureOf(hecTransport(sink).send(events(2)));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('sink "siem" did not take the events (HTTP 503, Server is busy, code 9).');
    const sending = sendWithRetry(hecTransport(sink), events(2), { retries: 5, backoffMs: 50 });
    await until(() => hec.posts.length >= 3, "two more refused posts");
    hec.mode = "up";
    await sending;
    expect(hec.indexed.map((e) => e.fields.flagtrail_id)).toEqual(["default:rec0", "default:rec1"]);
  });

  it("a collector that is down is a retryable network failure", async () => {
    const down = await startHec(TOKEN);
    await down.close();
    const sink = sinkOf({ kind: "splunk-hec", url: down.url, tokenEnv: "FT_TEST_HEC_TOKEN" });
    const error = await failureOf(hecTransport(sink).send(events(1)));
    expect(error).toMatchObject({
      retryable: true,
      message: 'sink "siem" could not be reached (ECONNREFUSED).',
    });
  });
});

describe("http (NDJSON)", () => {
  let intake: NdjsonReceiver;
  beforeAll(async () => {
    intake = await startNdjson();
    process.env.FT_TEST_DD_KEY = "dd-key-0f9e";
  });
  afterAll(async () => {
    delete process.env.FT_TEST_DD_KEY;
    await intake.close();
  });

  it("posts one event per line, gzipped when compress is set, with headers from the environment", async () => {
    const sink = sinkOf({
      kind: "http",
      url: intake.url,
      compress: true,
      headersEnv: { "DD-API-KEY": "FT_TEST_DD_KEY" },
    });
    await httpTransport(sink).send(events(4));
    const [request] = intake.requests;
    expect(request!.gzipped).toBe(true);
    expect(request!.headers["dd-api-key"]).toBe("dd-key-0f9e");
    expect(request!.headers["content-type"]).toBe("application/x-ndjson");
    expect(request!.lines.map((l) => JSON.parse(l))).toEqual(events(4).map((e) => JSON.parse(e.line)));
  });

  it("a batch refused as too large (413) goes in halves, in order; an event too large alone fails", async () => {
    const sink = sinkOf({ kind: "http", url: intake.url });
    intake.maxLines = 3;
    const before = intake.requests.length;
    try {
      await sendWithRetry(httpTransport(sink), events(10), { retries: 0, backoffMs: 0 });
      const taken = intake.requests.slice(before).filter((r) => r.status === 202);
      expect(taken.flatMap((r) => r.lines).map((l) => JSON.parse(l))).toEqual(
        events(10).map((e) => JSON.parse(e.line)),
      );
      expect(Math.max(...taken.map((r) => r.lines.length))).toBeLessThanOrEqual(3);
      intake.maxLines = 0;
      const error = await failureOf(
        sendWithRetry(httpTransport(sink), events(2), { retries: 0, backoffMs: 0 }),
      );
      expect(error).toMatchObject({
        retryable: false,
        message: 'sink "siem" did not take the events (HTTP 413).',
      });
    } finally {
      delete intake.maxLines;
    }
  });

  it("sends a batch as one JSON array when the sink says array (Datadog's logs intake)", async () => {
    const sink = sinkOf({ kind: "http", url: intake.url, array: true });
    await httpTransport(sink).send(events(3));
    const request = intake.requests.at(-1)!;
    expect(request.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request.text)).toEqual(events(3).map((e) => JSON.parse(e.line)));
  });

  it("a missing header variable names the sink and the variable; a 503 is retryable", async () => {
    const missing = sinkOf({
      kind: "http",
      url: intake.url,
      headersEnv: { "DD-API-KEY": "FT_TEST_UNSET_KEY" },
    });
    expect((await failureOf(httpTransport(missing).send(events(1)))).message).toBe(
      'sink "siem": the environment variable FT_TEST_UNSET_KEY is not set.',
    );
    intake.up = false;
    const sink = sinkOf({ kind: "http", url: intake.url });
    const error = await failureOf(httpTransport(sink).send(events(1)));
    expect(error).toMatchObject({
      retryable: true,
      message: 'sink "siem" did not take the events (HTTP 503).',
    });
    expect(intake.requests.at(-1)!.gzipped).toBe(false);
    intake.up = true;
  });
});

describe.each([false, true])("syslog to rsyslog (tls: %s)", (tls) => {
  const missing = ensureRsyslog(tls);
  let rsyslog: Rsyslog;
  beforeAll(async () => {
    if (!missing) rsyslog = await startRsyslog(tls);
  }, 300_000);
  afterAll(() => rsyslog?.stop());

  it.skipIf(missing !== null)(
    `RFC 5424 messages arrive whole and their JSON parses${missing ? ` (skipped: ${missing})` : ""}`,
    async () => {
      const url = `${tls ? "tls" : "tcp"}://127.0.0.1:${rsyslog.port}`;
      const sink = sinkOf({
        kind: "syslog",
        url,
        hostname: "ft-test",
        ...(tls ? { caFile: rsyslog.caFile } : {}),
      });
      const sent = events(50);
      // A large event too: beyond rsyslog's default 8k, within its configured maximum.
      sent.push({
        id: "default:big",
        line: JSON.stringify({ class_uid: 3004, time: 1, comment: "x".repeat(20_000) }),
      });
      await syslogTransport(sink).send(sent);
      await until(() => rsyslog.lines().length >= sent.length, "rsyslog to write every message");
      const lines = rsyslog.lines();
      expect(lines).toHaveLength(sent.length);
      lines.forEach((line, i) => {
        const match = /^<(\d+)>1 (\S+) ft-test flagtrail - ocsf \[flagtrail@32473 id="([^"]+)"\] (.*)$/.exec(
          line,
        );
        expect(match, line.slice(0, 200)).not.toBeNull();
        expect(match![1]).toBe("110");
        expect(match![3]).toBe(sent[i]!.id);
        expect(JSON.parse(match![4]!)).toEqual(JSON.parse(sent[i]!.line));
      });
    },
  );

  it.skipIf(missing !== null)("a receiver that is not listening is a retryable failure", async () => {
    await rsyslog.stop();
    const sink = sinkOf({ kind: "syslog", url: `${tls ? "tls" : "tcp"}://127.0.0.1:${rsyslog.port}` });
    const error = await failureOf(syslogTransport(sink).send(events(1)));
    expect(error).toMatchObject({
      retryable: true,
      message: 'sink "siem" could not be reached (ECONNREFUSED).',
    });
  });
});
