// Deterministic ids: a hash of the world's seed and what the id names, so that the same seed gives
// the same ids whatever order requests and generator reports arrive in.
import { createHash } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** 22 alphanumerics, like the real service's entity ids. */
export function seededId(seed: number, ...parts: string[]): string {
  const digest = createHash("sha256")
    .update(JSON.stringify([seed, ...parts]))
    .digest();
  let id = "";
  for (let i = 0; i < 22; i++) id += ALPHABET[digest[i]! % ALPHABET.length];
  return id;
}
