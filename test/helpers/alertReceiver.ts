// An HTTP receiver of alerts and SIEM batches on 127.0.0.1 that answers as the test says: the alert
// delivery tests count what it received, by Idempotency-Key or body line.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Mode = "ok" | "hang" | "refuse" | "gate";

export interface Receiver {
  url: string;
  /** Every request in arrival order: its Idempotency-Key (alerts) and body lines (SIEM batches). */
  requests: { at: number; key: string; lines: string[] }[];
  /** A "gate" receiver holds every request unanswered until this; then answers them all, and later ones. */
  open(): void;
  close(): Promise<void>;
}

/**
 * An HTTP receiver: "ok" answers 204, "refuse" 503, "hang" never answers (the sink's own timeout ends
 * each request), "gate" holds requests until open().
 */
export async function startReceiver(mode: Mode): Promise<Receiver> {
  const requests: Receiver["requests"] = [];
  const held: ServerResponse[] = [];
  let opened = mode !== "gate";
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const lines = Buffer.concat(chunks).toString("utf8").trim().split("\n");
      requests.push({ at: Date.now(), key: String(req.headers["idempotency-key"] ?? ""), lines });
      if (mode === "hang") return;
      if (mode === "refuse") res.writeHead(503).end();
      else if (opened) res.writeHead(204).end();
      else held.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests,
    open() {
      opened = true;
      for (const res of held.splice(0)) res.writeHead(204).end();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
