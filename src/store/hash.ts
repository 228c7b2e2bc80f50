// Hashing shared by the writer (sync) and the checker (verify): one definition, so they agree.
import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth: the same record always hashes the same. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

export function sha256Hex(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

export function recordHash(record: unknown): string {
  return sha256Hex(canonicalJson(record));
}

/** The chain starts from this value; each link is sha256(previous link + record hash). */
export const CHAIN_GENESIS = "0".repeat(64);

export function chainLink(previous: string, hashOfRecord: string): string {
  return sha256Hex(previous + hashOfRecord);
}
