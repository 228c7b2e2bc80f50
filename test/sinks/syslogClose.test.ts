// What a syslog sink's "taken" can and cannot mean (docs/sinks.md): syslog over TCP has no acknowledgement.
// Node receivers on 127.0.0.1 that never read: one that resets, one that closes its side while the batch
// is still being written (more than the kernel buffers hold), and one that closes its side at once with a
// small batch, which plain TCP cannot tell from a receiver that read it.
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { parseControlsConfig } from "../../src/controls/config.ts";
import { SinkError } from "../../src/errors.ts";
import { syslogTransport } from "../../src/export/sinks/syslog.ts";

let server: Server | undefined;
const connections: Socket[] = [];

afterEach(async () => {
  const s = server;
  server = undefined;
  for (const socket of connections.splice(0)) socket.destroy();
  if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
});

/** A receiver that never reads (paused from the start) and does `act` to each connection. */
async function receiver(act: (socket: Socket) => void): Promise<string> {
  server = createServer({ pauseOnConnect: true }, (socket) => {
    connections.push(socket);
    socket.on("error", () => {});
    act(socket);
  });
  const listening = server;
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  const { port } = listening.address() as { port: number };
  return `tcp://127.0.0.1:${port}`;
}

function send(url: string, bytes: number): Promise<void> {
  const [sink] = parseControlsConfig(
    JSON.stringify({ sinks: [{ name: "rsys", kind: "syslog", url, timeoutSeconds: 10 }] }),
    "test.json",
  ).sinks;
  if (sink?.kind !== "syslog") throw new Error("not a syslog sink");
  return syslogTransport(sink).send([
    { id: "default:r1", line: JSON.stringify({ text: "x".repeat(bytes) }) },
  ]);
}

const failure = (promise: Promise<void>) =>
  promise.then(
    () => "taken",
    (error: unknown) =>
      error instanceof SinkError ? `${error.message} retryable=${error.retryable}` : error,
  );

describe("syslog over TCP without an acknowledgement", () => {
  it("a receiver that resets the connection has not taken the batch", async () => {
    const url = await receiver((socket) => socket.resetAndDestroy());
    expect(await failure(send(url, 100))).toBe(
      'sink "rsys" could not be reached (ECONNRESET). retryable=true',
    );
  });

  it("a receiver that closes its side before the whole batch is written has not taken it", async () => {
    // 32 MB: more than loopback's send and receive buffers hold, so the write is still going on.
    const url = await receiver((socket) => socket.end());
    expect(await failure(send(url, 32_000_000))).toBe(
      'sink "rsys" closed the connection before taking the whole batch. retryable=true',
    );
  });

  it("a receiver that closes its side at once, a small batch unread: counted taken (TCP cannot tell)", async () => {
    const url = await receiver((socket) => socket.end());
    expect(await failure(send(url, 100))).toBe("taken");
    expect(connections).toHaveLength(1);
    expect(connections[0]!.bytesRead).toBe(0);
  });
});
