// Error bodies in the real service's shape `{status, message}` (+ `errors` on a 400), with the texts
// from ../shared/api/README.md "Errors and limits".
import type { SimResponse } from "./types.ts";

export const INVALID_REQUEST_MESSAGE = "Invalid request. Please check the request input and try again.";
const NOT_FOUND_MESSAGE = "Not Found. The requested resource could not be found.";
const FORBIDDEN_MESSAGE = "Forbidden resource";

export interface FieldError {
  property: string;
  message: string;
}

export function badRequest(errors: FieldError[]): SimResponse {
  return { status: 400, body: { status: 400, message: INVALID_REQUEST_MESSAGE, errors } };
}

export function notFound(): SimResponse {
  return { status: 404, body: { status: 404, message: NOT_FOUND_MESSAGE } };
}

export function forbidden(): SimResponse {
  return { status: 403, body: { status: 403, message: FORBIDDEN_MESSAGE } };
}

/**
 * Shows a short prefix of what was sent, never the whole key: at most 11 characters and at most
 * half of the key, so that even a short key is not echoed back.
 */
function maskKey(sent: string | undefined): string {
  if (sent === undefined || sent === "") return "(none)";
  return `${sent.slice(0, Math.min(11, Math.floor(sent.length / 2)))}…`;
}

export function unauthorized(kind: "console" | "server", sent: string | undefined): SimResponse {
  const keyKind = kind === "console" ? "CONSOLE" : "SERVER";
  return {
    status: 401,
    body: {
      status: 401,
      message: `This endpoint only accepts an active ${keyKind} key, but an invalid key was sent. Key: ${maskKey(sent)}`,
    },
  };
}

export function tooManyRequests(retryAfterSeconds: number | undefined): SimResponse {
  const response: SimResponse = {
    status: 429,
    body: { status: 429, message: "Too many requests. Please try again later." },
  };
  if (retryAfterSeconds !== undefined) response.headers = { "retry-after": String(retryAfterSeconds) };
  return response;
}

const SERVER_ERROR_TEXT: Record<number, string> = {
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

export function serverError(status: number): SimResponse {
  return { status, body: { status, message: SERVER_ERROR_TEXT[status] ?? "Internal Server Error" } };
}

/** What a reverse proxy in front of the service sends when the service is down: HTML, not JSON. */
export const HTML_BAD_GATEWAY =
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

export function htmlBadGateway(): SimResponse {
  return {
    status: 502,
    body: undefined,
    rawBody: HTML_BAD_GATEWAY,
    headers: { "content-type": "text/html" },
  };
}

/** A 200 that is not JSON at all, as from a misrouted health check or a captive portal. */
export const NON_JSON_OK = "OK\n";

export function nonJsonOk(): SimResponse {
  return {
    status: 200,
    body: undefined,
    rawBody: NON_JSON_OK,
    headers: { "content-type": "text/plain; charset=utf-8" },
  };
}
