// Hashing and canonical JSON, shared by the writer (store), the rule diffs, the manifest and the checker
// (verify): one definition, so they agree, and outside the store so nothing imports upward into it.
import { hash, timingSafeEqual } from "node:crypto";

/**
 * JSON with object keys sorted at every depth: the same record always hashes the same. The key order
 * is exactly JSON.stringify's over an object built in sorted key order (integer-like keys first,
 * ascending), because that is how it is made: objects whose keys are out of order are copied in order,
 * everything else is passed to JSON.stringify as it is. It runs for every record stored, so it copies
 * only what it must and writes the text once.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortedKeys(value)) ?? "null";
}

/** `value` with every object's keys in sorted order; the same value where nothing had to move. */
function sortedKeys(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function")
    return sortedKeys((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i += 1) {
      const item = sortedKeys(value[i]);
      if (item !== value[i] && copy === null) copy = value.slice(0, i);
      copy?.push(item);
    }
    return copy ?? value;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let changed = sortInPlace(keys);
  const values = new Array<unknown>(keys.length);
  for (let i = 0; i < keys.length; i += 1) {
    const before = record[keys[i]!];
    values[i] = sortedKeys(before);
    if (values[i] !== before) changed = true;
  }
  if (!changed) return value;
  const copy: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i += 1) copy[keys[i]!] = values[i];
  return copy;
}

/** Insertion sort (objects have few keys; Array#sort allocates a work array per call). True if moved. */
function sortInPlace(keys: string[]): boolean {
  let moved = false;
  for (let i = 1; i < keys.length; i += 1) {
    const key = keys[i]!;
    let j = i - 1;
    if (keys[j]! <= key) continue;
    moved = true;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j -= 1;
    }
    keys[j + 1] = key;
  }
  return moved;
}

export function sha256Hex(data: string | Buffer): string {
  // The one-shot form: no Hash stream object per call (this runs twice for every record stored).
  return hash("sha256", data, "hex");
}

/** Whether two hex digests (HMACs, signatures) are the same bytes, compared in constant time. */
export function hexDigestsEqual(expected: string, actual: string): boolean {
  const a = Buffer.from(expected, "hex");
  const b = Buffer.from(actual, "hex");
  // Decoding stops at the first character that is not hex: "…ab" and "…abzz" would decode alike.
  return b.length * 2 === actual.length && a.length === b.length && timingSafeEqual(a, b);
}

export function recordHash(record: unknown): string {
  return sha256Hex(canonicalJson(record));
}

/** The chain starts from this value; each link is sha256(previous link + record hash). */
export const CHAIN_GENESIS = "0".repeat(64);

export function chainLink(previous: string, hashOfRecord: string): string {
  return sha256Hex(previous + hashOfRecord);
}

export interface EntityChainHead {
  seq: number;
  hash: string;
}

/** The entity chain's links of one write transaction, from the head stored before it (src/store/entityChain.ts). */
export class EntityChainLinks {
  private current: EntityChainHead;

  constructor(stored: EntityChainHead | null) {
    this.current = stored === null ? { seq: 0, hash: CHAIN_GENESIS } : { seq: stored.seq, hash: stored.hash };
  }

  next(recordHash: string): EntityChainHead {
    this.current = { seq: this.current.seq + 1, hash: chainLink(this.current.hash, recordHash) };
    return this.current;
  }

  /** The last link handed out (or the stored head): what meta mirrors. */
  get head(): EntityChainHead {
    return this.current;
  }
}
