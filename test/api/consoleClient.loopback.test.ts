// The client's own undici Agent against a real HTTP server on 127.0.0.1: keep-alive, real resets,
// a body cut short, a server that never answers.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ConsoleApiClient } from "../../src/api/consoleClient.ts";
import { createConsoleClient } from "../../src/api/consoleClient.ts";
import { FakeClock } from "./fakeClock.ts";

const KEY = "console-LoopbackKey000000000000";
const QUERY = { startDate: "2024-03-01", endDate: "2024-03-02", page: 1, limit: 2 } as const;
const BODY = JSON.stringify({
  message: "Audit logs listed successfully.",
  data: [{ id: "r1" }, { id: "r2" }],
  pagination: { itemsPerPage: 2, pageNumber: 1, totalItems: 2, nextPage: null, previousPage: null },
});

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

let server: Server | undefined;
let client: ConsoleApiClient | undefined;

afterEach(async () => {
  await client?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
  client = undefined;
});

/** Starts a server whose n-th request (from 1) is answered by handlers[n-1] (the last one repeats). */
async function serve(handlers: Handler[]) {
  const seen = { requests: 0, connections: 0, keys: [] as Array<string | undefined> };
  server = createServer((req, res) => {
    seen.requests += 1;
    seen.keys.push(req.headers["statsig-api-key"] as string | undefined);
    const handler = handlers[Math.min(seen.requests, handlers.length) - 1]!;
    handler(req, res, seen.requests);
  });
  server.on("connection", () => {
    seen.connections += 1;
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = createConsoleClient({
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey: KEY,
    clock: new FakeClock(),
    random: () => 0.5,
    timeoutMs: 500,
  });
  return { client, seen };
}

const ok: Handler = (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" }).end(BODY);
};

describe("ConsoleClient over loopback", () => {
  it("reuses one keep-alive connection and sends the key only in its header", async () => {
    const { client, seen } = await serve([ok]);
    for (let page = 1; page <= 5; page += 1) {
      const result = await client.listAuditLogs({ ...QUERY, page });
      expect(result.records).toEqual([{ id: "r1" }, { id: "r2" }]);
      expect(result.requestPath).not.toContain(KEY);
    }
    expect(seen.requests).toBe(5);
    // undici may open a second socket while the first is being released; never one per request.
    expect(seen.connections).toBeLessThanOrEqual(2);
    expect(seen.keys).toEqual([KEY, KEY, KEY, KEY, KEY]);
  });

  it("retries after the server resets the connection", async () => {
    const { client, seen } = await serve([(req) => req.socket.destroy(), ok]);
    const result = await client.listAuditLogs(QUERY);
    expect(result.records).toHaveLength(2);
    expect(seen.requests).toBe(2);
    expect(client.stats()).toEqual({ requests: 2, throttled: 0, retries: 1 });
  });

  it("retries a body cut short before its announced length", async () => {
    const cut: Handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(BODY.length) });
      res.write(BODY.slice(0, 40));
      setTimeout(() => res.socket?.destroy(), 5);
    };
    const { client, seen } = await serve([cut, ok]);
    const result = await client.listAuditLogs(QUERY);
    expect(result.records).toHaveLength(2);
    expect(seen.requests).toBe(2);
  });

  it("abandons an attempt the server never answers and retries it", async () => {
    const { client, seen } = await serve([() => {}, ok]);
    const result = await client.listAuditLogs(QUERY);
    expect(result.records).toHaveLength(2);
    expect(seen.requests).toBe(2);
    expect(client.stats().retries).toBe(1);
  });
});
