// The HMAC key that signs report manifests and the store's chain head. Read from the environment only,
// so it is never written to a config file, the store, a log or a report; an empty value means unset.
import type { Env } from "./config.ts";

const SIGNING_KEY_ENV = "FLAGTRAIL_SIGNING_KEY";

export function signingKeyFromEnv(env: Env = process.env): string | undefined {
  return env[SIGNING_KEY_ENV] || undefined;
}

/**
 * The key the store was signed with before a rotation: the sync accepts a head signed with it and signs
 * the head again with the new key (docs/operations.md, Rotating the signing key).
 */
export function previousSigningKeyFromEnv(env: Env = process.env): string | undefined {
  return env[`${SIGNING_KEY_ENV}_PREVIOUS`] || undefined;
}
