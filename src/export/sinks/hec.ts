// Splunk's HTTP Event Collector: a batch is one gzipped POST of concatenated JSON objects to
// /services/collector/event. With indexer acknowledgement (useAck) the answer carries an ackId, and the
// batch counts as delivered only once /services/collector/ack says that id is indexed; the channel is a
// UUID derived from the sink's name, so it stays the same across runs.

import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import { gzipSync } from "node:zlib";
import type { SiemSink } from "../../controls/config.ts";
import { sinkSecret } from "../../controls/sinks/secret.ts";
import { SinkError } from "../../errors.ts";
import { httpFailure, networkFailure, type SinkEvent, type Transport, timeOf } from "./transport.ts";

type HecSink = Extract<SiemSink, { kind: "splunk-hec" }>;

/** A name-based UUID (version 5 layout) of the sink's name: its HEC channel. */
export function hecChannel(name: string): string {
  const hex = createHash("sha1").update(`flagtrail-hec:${name}`).digest("hex").slice(0, 32).split("");
  hex[12] = "5";
  hex[16] = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The collector's endpoint: the url as given when it names one, else /services/collector/<path>. */
function endpoint(url: string, path: "event" | "ack"): string {
  const base = url.replace(/\/+$/, "").replace(/\/services\/collector(\/event)?$/, "");
  return `${base}/services/collector/${path}`;
}

/** One HEC event object: the flagtrail event's time in seconds, its stable id as an indexed field. */
function hecEvent(sink: HecSink, host: string, e: SinkEvent): string {
  const event: unknown = JSON.parse(e.line);
  const time = timeOf(event);
  return JSON.stringify({
    ...(time === undefined ? {} : { time: time / 1000 }),
    host,
    source: "flagtrail",
    sourcetype: sink.sourcetype,
    ...(sink.index === undefined ? {} : { index: sink.index }),
    fields: { flagtrail_id: e.id },
    event,
  });
}

interface HecAnswer {
  text?: string;
  code?: number;
  ackId?: number;
  acks?: Record<string, boolean>;
}

export function hecTransport(sink: HecSink): Transport {
  const host = hostname();
  const channel = hecChannel(sink.name);
  const timeoutMs = sink.timeoutSeconds * 1000;

  const post = async (path: "event" | "ack", body: Buffer | string): Promise<HecAnswer> => {
    const token = sinkSecret(sink.name, { env: sink.tokenEnv, file: sink.tokenFile });
    let response: Response;
    try {
      response = await fetch(endpoint(sink.url, path), {
        method: "POST",
        headers: {
          authorization: `Splunk ${token}`,
          "x-splunk-request-channel": channel,
          "content-type": "application/json",
          ...(typeof body === "string" ? {} : { "content-encoding": "gzip" }),
        },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw networkFailure(sink.name, error, sink.url);
    }
    const text = await response.text().catch(() => "");
    let answer: HecAnswer = {};
    try {
      answer = JSON.parse(text) as HecAnswer;
    } catch {
      // A proxy's HTML page: the status says enough.
    }
    if (!response.ok) {
      const detail = answer.text
        ? `${answer.text}${answer.code === undefined ? "" : `, code ${answer.code}`}`
        : "";
      // An index the token may not write, a missing or invalid channel: every event alike, not these.
      const ofTheSink = response.status === 400 && [7, 10, 11].includes(answer.code ?? 0);
      throw httpFailure(sink.name, response.status, detail || text.slice(0, 300), ofTheSink);
    }
    return answer;
  };

  const waitForAck = async (ackId: number): Promise<void> => {
    const deadline = Date.now() + sink.ackTimeoutSeconds * 1000;
    for (let wait = 100; ; wait = Math.min(wait * 2, 5_000)) {
      const answer = await post("ack", JSON.stringify({ acks: [ackId] }));
      if (answer.acks?.[String(ackId)] === true) return;
      if (Date.now() + wait > deadline)
        throw new SinkError(
          sink.name,
          `did not acknowledge the events within ${sink.ackTimeoutSeconds} s`,
          true,
        );
      await delay(wait);
    }
  };

  return {
    async send(events) {
      const body = gzipSync(events.map((e) => hecEvent(sink, host, e)).join("\n"));
      const answer = await post("event", body);
      if (!sink.useAck) return;
      if (typeof answer.ackId !== "number")
        throw new SinkError(
          sink.name,
          "gave no ackId: turn indexer acknowledgement on for its token, or set useAck to false",
          false,
        );
      await waitForAck(answer.ackId);
    },
  };
}
