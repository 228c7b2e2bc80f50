// Syslog over TCP (or TLS): RFC 5424 messages, octet-counting framing (RFC 6587), one connection per
// batch. Syslog has no acknowledgement, and Node shows nothing of TCP's: a batch counts as taken once
// every byte and our end of stream are written and the receiver then closes its side (FIN) without a
// reset. A receiver closing with the batch unread resets (caught), one closing before it is all written
// is caught by that order, but one that closes at once, before the batch reaches it, cannot be told from
// one that read it (docs/sinks.md).
import { readFileSync } from "node:fs";
import { isIP, type Socket, connect as tcpConnect } from "node:net";
import { hostname } from "node:os";
import { connect as tlsConnect } from "node:tls";
import type { SiemSink } from "../../controls/config.ts";
import { SinkError } from "../../errors.ts";
import { networkFailure, type SinkEvent, severityIdOf, type Transport, timeOf } from "./transport.ts";

type SyslogSink = Extract<SiemSink, { kind: "syslog" }>;

/** Facility 13, "log audit". */
const FACILITY = 13;
/** OCSF severity_id (1 informational … 6 fatal) → syslog severity (6 informational … 1 alert). */
const SEVERITY: Record<number, number> = { 1: 6, 2: 5, 3: 4, 4: 3, 5: 2, 6: 1 };

/** An SD-PARAM value: `"`, `\` and `]` escaped (RFC 5424 §6.3.3). */
const sdValue = (text: string): string => text.replace(/["\\\]]/g, (c) => `\\${c}`);

/** `<110>1 2026-11-26T12:00:00.000Z host flagtrail - ocsf [flagtrail@32473 id="…"] {json}` */
function syslogMessage(e: SinkEvent, host: string, msgId: string): string {
  const event: unknown = JSON.parse(e.line);
  const pri = FACILITY * 8 + (SEVERITY[severityIdOf(event) ?? 1] ?? 6);
  const time = new Date(timeOf(event) ?? Date.now()).toISOString();
  return `<${pri}>1 ${time} ${host} flagtrail - ${msgId} [flagtrail@32473 id="${sdValue(e.id)}"] ${e.line}`;
}

/** RFC 6587 octet counting: the message's length in bytes, a space, the message. */
const frame = (message: string): string => `${Buffer.byteLength(message)} ${message}`;

function hostField(sink: SyslogSink): string {
  // HOSTNAME is printable ASCII without spaces, at most 255 characters, "-" when unknown.
  return (sink.hostname ?? hostname()).replace(/[^\x21-\x7e]/g, "").slice(0, 255) || "-";
}

export function syslogTransport(sink: SyslogSink): Transport {
  const { protocol, hostname: host, port } = new URL(sink.url);
  const tls = protocol === "tls:";
  const name = host.replace(/^\[|\]$/g, "");
  const me = hostField(sink);
  return {
    send(events) {
      const data = events.map((e) => frame(syslogMessage(e, me, sink.format))).join("");
      return new Promise<void>((resolve, reject) => {
        let ca: Buffer | undefined;
        try {
          ca = tls && sink.caFile ? readFileSync(sink.caFile) : undefined;
        } catch {
          reject(new SinkError(sink.name, "cannot read its caFile", false, "clause"));
          return;
        }
        const socket: Socket = tls
          ? tlsConnect({
              host: name,
              port: Number(port),
              // SNI carries host names only; a certificate for an address is checked all the same.
              ...(isIP(name) ? {} : { servername: name }),
              ...(ca ? { ca } : {}),
            })
          : tcpConnect({ host: name, port: Number(port) });
        let failed: unknown;
        socket.setTimeout(sink.timeoutSeconds * 1000, () => {
          failed = new SinkError(sink.name, "did not close the connection in time", true);
          socket.destroy();
        });
        socket.once(tls ? "secureConnect" : "connect", () => socket.end(data));
        socket.on("error", (error) => {
          failed ??= error;
        });
        // The receiver's end of stream: after ours was written, the batch counts as taken; before it,
        // the rest of the batch can never go.
        socket.on("end", () => {
          if (!socket.writableFinished)
            failed ??= new SinkError(sink.name, "closed the connection before taking the whole batch", true);
          socket.destroy();
        });
        socket.once("close", () => {
          if (failed === undefined && socket.writableFinished) resolve();
          else reject(networkFailure(sink.name, failed ?? new Error("closed early")));
        });
      });
    },
  };
}
