// Shared helpers of the simulator tests: real HTTP to 127.0.0.1 with the console key.
import type { RunningSimulator } from "../../src/simulator/index.ts";

export const KEY = "console-simulator-key";

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  body: any;
}

export async function call(
  sim: RunningSimulator,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; key?: string | null } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== null) headers["STATSIG-API-KEY"] = init.key ?? KEY;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${sim.url}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** Every record of a query, page by page, checking the pagination links on the way. */
// biome-ignore lint/suspicious/noExplicitAny: records are arbitrary JSON
export async function allPages(sim: RunningSimulator, query: string, limit: number): Promise<any[]> {
  // biome-ignore lint/suspicious/noExplicitAny: records are arbitrary JSON
  const records: any[] = [];
  for (let page = 1; ; page++) {
    const reply = await call(sim, `/console/v1/audit_logs?${query}&limit=${limit}&page=${page}`);
    if (reply.status !== 200) throw new Error(`page ${page}: ${reply.status} ${reply.text}`);
    records.push(...reply.body.data);
    if (reply.body.pagination.nextPage === null) return records;
    if (page > 10_000) throw new Error("pagination never ends");
  }
}

export function auditPath(query: string): string {
  return `/console/v1/audit_logs?${query}`;
}
