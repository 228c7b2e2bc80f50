// What one HTTP exchange with the console API means, from its status, headers and body: a JSON body, a
// failure worth another attempt (with the server's Retry-After), or a final error thrown at once. Server
// messages are quoted with the key removed (the 401 body echoes it, so that one is never quoted).
import { ApiError, AuthError } from "../errors.ts";
import { isRetryableStatus, parseRetryAfter } from "./retryPolicy.ts";
import { errorBodySchema } from "./schemas.ts";

export const AUTH_REJECTED_MESSAGE = "The API key was rejected: it is not an active console key.";

export type AttemptOutcome =
  | { ok: true; json: unknown; text: string }
  | { ok: false; status: number | undefined; reason: string; retryAfterMs: number | undefined };

/**
 * One line from a body that is not JSON: a proxy's HTML error page is named by its title, anything
 * else is cut short, with line breaks and control characters flattened, so errors stay one sentence.
 */
export function excerptOf(text: string): string | undefined {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  const flat = (title ?? (/^\s*</.test(text) ? "an HTML page" : text))
    .replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, " ")
    .trim();
  return flat === "" ? undefined : flat.slice(0, 120);
}

/** A received response as an attempt's outcome; a final failure (401, 403, other 4xx) is thrown. */
export function responseOutcome(
  requestPath: string,
  response: { status: number; text: string; retryAfter: string | string[] | undefined },
  context: { now: () => number; redact: (text: string) => string },
): AttemptOutcome {
  const { status, text } = response;
  if (status >= 200 && status < 300) {
    try {
      return { ok: true, json: JSON.parse(text), text };
    } catch {
      return {
        ok: false,
        status,
        reason: `HTTP ${status} with a truncated or invalid JSON body (${text.length} characters)`,
        retryAfterMs: undefined,
      };
    }
  }
  const serverMessage = serverMessageOf(text, context.redact);
  if (isRetryableStatus(status)) {
    return {
      ok: false,
      status,
      reason: `HTTP ${status}${serverMessage === undefined ? "" : ` "${serverMessage}"`}`,
      retryAfterMs: parseRetryAfter(response.retryAfter, context.now()),
    };
  }
  // The 401 body echoes (part of) the key: its text is never used.
  if (status === 401) throw new AuthError(AUTH_REJECTED_MESSAGE, status);
  if (status === 403) {
    throw new ApiError(
      `GET ${requestPath} was refused (HTTP 403${serverMessage === undefined ? "" : ` "${serverMessage}"`}): ` +
        "the key is valid but may not read this resource.",
      status,
    );
  }
  const said = serverMessage === undefined ? "" : `: ${serverMessage}`;
  throw new ApiError(`GET ${requestPath} failed with HTTP ${status}${said}`, status);
}

/** The `message` of an error body, or a short excerpt of a non-JSON body, with secrets removed. */
function serverMessageOf(text: string, redact: (text: string) => string): string | undefined {
  let message: string | undefined;
  try {
    const body = errorBodySchema.safeParse(JSON.parse(text));
    message = body.success ? body.data.message : undefined;
  } catch {
    message = excerptOf(text);
  }
  return message === undefined ? undefined : redact(message);
}
