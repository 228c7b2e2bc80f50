// A small seeded PRNG (sfc32) so that the simulator's history and faults are reproducible from a
// seed. Math.random is never used by the simulator.

const ALPHANUMERIC_CODES = Array.from("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", (c) =>
  c.charCodeAt(0),
);

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    // splitmix-style scrambling so that nearby seeds and streams give unrelated sequences.
    this.a = 0x9e3779b9 ^ (seed >>> 0);
    this.b = 0x243f6a88 ^ Math.imul(stream + 1, 0x85ebca6b);
    this.c = 0xb7e15162 ^ Math.imul((seed / 0x100000000) >>> 0, 0xc2b2ae35);
    this.d = 1;
    for (let i = 0; i < 15; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 0x100000000;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return probability > 0 && this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Index chosen with probability proportional to its weight. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i]!;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }

  /** `length` characters of [0-9A-Za-z], the shape of the service's ids. */
  alphanumeric(length: number): string {
    // One flat string: `+=` per character would build a rope of `length` nodes, which costs
    // hundreds of bytes per id when a million ids stay in memory.
    const codes = new Array<number>(length);
    for (let i = 0; i < length; i++) codes[i] = ALPHANUMERIC_CODES[this.nextUint32() % 62]!;
    return String.fromCharCode(...codes);
  }
}

/** A stable 32-bit hash (FNV-1a) of a string, for per-record decisions that must not depend on order. */
export function hash32(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
