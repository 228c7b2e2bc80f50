// The simulator's HTTP front: body parsing, auth, faults, dispatch to routes, JSON out. Control
// routes (/_sim/…) skip the faults and the rate limit and only answer loopback clients.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { Counters } from "./counters.ts";
import type { FaultEngine } from "./faults.ts";
import {
  badRequest,
  forbidden,
  htmlBadGateway,
  nonJsonOk,
  notFound,
  serverError,
  tooManyRequests,
  unauthorized,
} from "./responses.ts";
import type { SimRequest, SimResponse, SimRoute } from "./types.ts";

const CONTROL_PREFIX = "/_sim/";
const MAX_BODY_BYTES = 1_000_000;
const SERVER_KEEP_ALIVE_MS = 120_000;

export interface ServerDeps {
  apiKey: string;
  serverSecret: string;
  authHeader: string;
  apiRoutes: SimRoute[];
  controlRoutes: SimRoute[];
  faults: FaultEngine;
  counters: Counters;
}

type Body = { ok: true; value: unknown } | { ok: false; reason: string };

async function readBody(req: IncomingMessage): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return { ok: false, reason: "body is too large" };
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, reason: "body is not valid JSON" };
  }
}

export function isLoopback(address: string | undefined): boolean {
  return address === "127.0.0.1" || address === "::1" || address === "::ffff:127.0.0.1";
}

function match(
  routes: SimRoute[],
  method: string,
  pathname: string,
): { route: SimRoute; params: string[] } | null {
  for (const route of routes) {
    if (route.method !== method) continue;
    const found = route.pattern.exec(pathname);
    if (found) {
      try {
        return { route, params: found.slice(1).map((p) => decodeURIComponent(p ?? "")) };
      } catch {
        return null;
      }
    }
  }
  return null;
}

function send(res: ServerResponse, response: SimResponse, truncate = false): void {
  let payload = response.rawBody ?? JSON.stringify(response.body ?? null);
  // Cut inside the JSON text but declare the cut length: a well-formed HTTP response whose body
  // does not parse, which is what a client sees when a proxy truncates.
  if (truncate) payload = payload.slice(0, Math.max(1, Math.floor(payload.length / 2)));
  const bytes = Buffer.from(payload, "utf8");
  res.writeHead(response.status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": String(bytes.length),
    ...response.headers,
  });
  res.end(bytes);
}

export function createSimServer(deps: ServerDeps): Server {
  const headerName = deps.authHeader.toLowerCase();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://simulator.invalid");
    const method = (req.method ?? "GET").toUpperCase();
    const body = await readBody(req);
    const sentKey = req.headers[headerName];
    const key = Array.isArray(sentKey) ? sentKey[0] : sentKey;
    const request: SimRequest = {
      method,
      pathname: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: body.ok ? body.value : undefined,
    };
    const reply = (response: SimResponse, truncate = false) => {
      deps.counters.status(response.status);
      send(res, response, truncate);
    };

    if (url.pathname.startsWith(CONTROL_PREFIX)) {
      // Not counted: counters describe what the client under test did, not the test's own probes.
      if (!isLoopback(req.socket.remoteAddress)) return send(res, forbidden());
      if (key !== deps.apiKey) return send(res, unauthorized("console", key));
      const found = match(deps.controlRoutes, method, url.pathname);
      if (found === null) return send(res, notFound());
      if (!body.ok) return send(res, badRequest([{ property: "body", message: body.reason }]));
      return send(res, found.route.handle(request, found.params));
    }

    const found = match(deps.apiRoutes, method, url.pathname);
    if (found === null) return reply(notFound());
    deps.counters.request(`${method} ${url.pathname}`);
    const expected = found.route.auth === "console" ? deps.apiKey : deps.serverSecret;
    if (key !== expected) return reply(unauthorized(found.route.auth, key));

    const limited = deps.faults.rateLimit();
    if (limited.limited) return reply(tooManyRequests(limited.retryAfterSeconds));
    const faults = deps.faults.forRequest();
    if (faults.delayMs > 0) await sleep(faults.delayMs);
    if (faults.serverError !== undefined) return reply(serverError(faults.serverError));
    if (faults.htmlError) return reply(htmlBadGateway());
    if (faults.throttle) return reply(tooManyRequests(undefined));
    if (faults.reset) {
      // A TCP RST where the platform supports it, otherwise a plain close.
      if (typeof req.socket.resetAndDestroy === "function") req.socket.resetAndDestroy();
      else req.socket.destroy();
      return;
    }
    if (!body.ok) return reply(badRequest([{ property: "body", message: body.reason }]));
    if (faults.nonJson200) return reply(nonJsonOk());
    const response = found.route.handle(request, found.params);
    if (faults.truncate) deps.counters.fault("truncate");
    reply(response, faults.truncate);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      deps.counters.status(500);
      send(res, serverError(500));
      // The simulator is a test bed: surface the bug instead of hiding it behind a 500.
      process.emitWarning(`simulator route failed: ${error instanceof Error ? error.stack : String(error)}`);
    });
  });
  // A healthy server must not close idle sockets its client may still pick (node's 5 s default raced
  // a client busy in a long commit: its queued requests went out on sockets already closed). Longer
  // than the client's longest idle time (undici's keepAliveMaxTimeout, 60 s); headersTimeout above it
  // as node requires.
  server.keepAliveTimeout = SERVER_KEEP_ALIVE_MS;
  server.headersTimeout = SERVER_KEEP_ALIVE_MS + 1_000;
  return server;
}
