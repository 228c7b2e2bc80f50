// `flagtrail doctor`'s key check: the cheapest request the console API has, one audit log record of
// today (GET /console/v1/audit_logs?limit=1), sent once with the headers a sync sends, no retries. Its
// answer also carries the server's Date header, which gives the clock skew. The key is never printed:
// a 401's body echoes part of it, so only the status is used.
import { request } from "undici";
import { auditLogsRequestPath } from "../api/requestPaths.ts";
import { VERSION } from "../version.ts";
import type { Check } from "./checks.ts";

export interface Connection {
  baseUrl: string;
  apiKey: string;
  authHeader: string;
}

const TIMEOUT_MS = 15_000;
const SKEW_OK_MS = 5_000;
const SKEW_WARN_MS = 300_000;

/** The key line and the clock line for one connection (`label` names a project when there are several). */
export async function probeKey(connection: Connection, label = ""): Promise<Check[]> {
  const today = new Date().toISOString().slice(0, 10);
  const path = auditLogsRequestPath({
    startDate: today,
    endDate: today,
    page: 1,
    limit: 1,
    sortOrder: "desc",
  });
  const url = `${connection.baseUrl}${path}`;
  const sentAt = Date.now();
  let status: number;
  let date: string | undefined;
  try {
    const response = await request(url, {
      method: "GET",
      headers: {
        accept: "application/json",
        "user-agent": `flagtrail/${VERSION}`,
        "statsig-api-version": "20240601",
        [connection.authHeader.toLowerCase()]: connection.apiKey,
      },
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
    await response.body.dump();
    status = response.statusCode;
    const header = response.headers.date;
    date = Array.isArray(header) ? header[0] : header;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
    return [
      { name: `key${label}`, status: "fail", detail: `could not reach ${connection.baseUrl} (${code})` },
      { name: `clock${label}`, status: "warn", detail: "not checked: the server did not answer" },
    ];
  }
  const receivedAt = Date.now();
  return [keyLine(status, connection.baseUrl, label), clockLine(date, (sentAt + receivedAt) / 2, label)];
}

function keyLine(status: number, baseUrl: string, label: string): Check {
  const name = `key${label}`;
  if (status >= 200 && status < 300)
    return { name, status: "ok", detail: `accepted by ${baseUrl} (HTTP ${status})` };
  if (status === 401)
    return { name, status: "fail", detail: `rejected by ${baseUrl} (HTTP 401): not an active console key` };
  if (status === 403)
    return { name, status: "fail", detail: `valid, but may not read the audit log at ${baseUrl} (HTTP 403)` };
  return { name, status: "fail", detail: `${baseUrl} answered HTTP ${status} to one audit log record` };
}

/** Our clock against the server's Date header (one-second resolution), taken at the request's midpoint. */
function clockLine(date: string | undefined, localMs: number, label = ""): Check {
  const name = `clock${label}`;
  const serverMs = date === undefined ? Number.NaN : Date.parse(date);
  if (Number.isNaN(serverMs))
    return { name, status: "warn", detail: "not checked: the server sent no Date header" };
  const skew = localMs - serverMs;
  const text = `${skew >= 0 ? "ahead of" : "behind"} the server by ${(Math.abs(skew) / 1000).toFixed(1)} s`;
  if (Math.abs(skew) <= SKEW_OK_MS) return { name, status: "ok", detail: text };
  return {
    name,
    status: Math.abs(skew) <= SKEW_WARN_MS ? "warn" : "fail",
    detail: `${text}; coverage decides when a server day has ended by this clock (run NTP)`,
  };
}
