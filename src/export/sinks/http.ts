// Batches to any HTTP intake (Elastic, Vector, Logstash, Fluent Bit; Datadog's logs intake with `array`):
// one POST per batch, one event per NDJSON line or one JSON array, gzipped when the sink says `compress`. Headers (an API key) come
// from environment variables; a 2xx is the acknowledgement.

import { gzipSync } from "node:zlib";
import type { SiemSink } from "../../controls/config.ts";
import { sinkSecret } from "../../controls/sinks/secret.ts";
import { httpFailure, networkFailure, type Transport } from "./transport.ts";

type HttpSink = Extract<SiemSink, { kind: "http" }>;

export function httpTransport(sink: HttpSink): Transport {
  return {
    async send(events) {
      const headers: Record<string, string> = {
        "content-type": sink.array ? "application/json" : "application/x-ndjson",
      };
      for (const [header, env] of Object.entries(sink.headersEnv))
        headers[header] = sinkSecret(sink.name, { env });
      const text = sink.array
        ? `[${events.map((e) => e.line).join(",")}]`
        : events.map((e) => `${e.line}\n`).join("");
      if (sink.compress) headers["content-encoding"] = "gzip";
      let response: Response;
      try {
        response = await fetch(sink.url, {
          method: "POST",
          headers,
          body: sink.compress ? gzipSync(text) : text,
          signal: AbortSignal.timeout(sink.timeoutSeconds * 1000),
        });
      } catch (error) {
        throw networkFailure(sink.name, error, sink.url);
      }
      await response.body?.cancel();
      if (!response.ok) throw httpFailure(sink.name, response.status, "");
    },
  };
}
