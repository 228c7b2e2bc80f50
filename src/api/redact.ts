// Server messages are shown to users and stored in errors; the key must never travel with them.

/** Tokens shaped like the service's keys (`console-…`, `secret-…`, `client-…`), whole or truncated. */
const KEY_LIKE = /\b(?:console|secret|client)-[A-Za-z0-9_-]{3,}…?/gi;

const REDACTED = "[redacted]";

/** Removes every given secret and anything shaped like an API key, and bounds the length. */
export function redactSecrets(text: string, secrets: readonly string[], maxLength = 300): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  out = out.replace(KEY_LIKE, REDACTED);
  return out.length > maxLength ? `${out.slice(0, maxLength)}…` : out;
}
