// Hashing shared by the writer (sync) and the checker (verify): one definition, so they agree.
import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every depth: the same record always hashes the same. Written out
 * directly (no sorted copy of the value) because it runs for every record stored. The key order is
 * exactly JSON.stringify's over an object built in sorted key order: integer-like keys first, ascending.
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? "null";
}

const INTEGER_KEY = /^(?:0|[1-9]\d*)$/;

function orderedKeys(value: object): string[] {
  const keys = Object.keys(value).sort();
  if (!keys.some((key) => INTEGER_KEY.test(key))) return keys;
  // Let the engine order them as it orders any object's own keys.
  return Object.keys(Object.fromEntries(keys.map((key) => [key, 0])));
}

/** JSON text of a value, or undefined where JSON.stringify leaves a value out (undefined, functions). */
function write(value: unknown): string | undefined {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === "function")
    return write((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i += 1) out += `${i === 0 ? "" : ","}${write(value[i]) ?? "null"}`;
    return `${out}]`;
  }
  let out = "{";
  let first = true;
  for (const key of orderedKeys(value)) {
    const text = write((value as Record<string, unknown>)[key]);
    if (text === undefined) continue;
    out += `${first ? "" : ","}${JSON.stringify(key)}:${text}`;
    first = false;
  }
  return `${out}}`;
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
