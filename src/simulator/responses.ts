// Error bodies in the real service's shape `{status, message}` (+ `errors` on a 400), with the texts
// from ../shared/api/README.md "Errors and limits".
import type { SimResponse } from "./types.ts";

export const INVALID_REQUEST_MESSAGE = "Invalid request. Please check the request input and try again.";
export const NOT_FOUND_MESSAGE = "Not Found. The requested resource could not be found.";
export const FORBIDDEN_MESSAGE = "Forbidden resource";

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
export function maskKey(sent: string | undefined): string {
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
