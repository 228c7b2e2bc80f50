// A report re-run for a period whose data has not changed produces the same files but for their
// "generated at" (the Markdown and HTML print it). Such a run keeps the earlier report's generation
// time, so that its files come out byte-identical and nothing needs replacing (issue 26).
//
// The files are compared as bytes, a 64 KiB block at a time: read whole into strings, a one-month
// 1M-record report's ~10 MB of CSVs (two-byte strings after their byte-order mark) grew the re-run's
// peak RSS by ~26 MB over the first run's, and its CPU by the decoding. The times are ASCII, so a byte
// match is a character match (UTF-8 continuation bytes are never ASCII).
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const earlierManifestSchema = z.object({ generatedAt: z.string().min(1) });

const BLOCK = 1 << 16;

function readEarlierTime(path: string): string | null {
  try {
    const parsed = earlierManifestSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data.generatedAt : null;
  } catch {
    return null; // none, unreadable or not JSON: nothing to keep
  }
}

/**
 * Streams the file at `path` with every `from` replaced by `to`, handing the result to `emit` in pieces;
 * returns whether `from` occurred at all.
 */
function replaced(path: string, from: Buffer, to: Buffer, emit: (piece: Buffer) => void): boolean {
  const fd = openSync(path, "r");
  let found = false;
  try {
    // A match may straddle a block's end: up to from.length - 1 bytes are carried to the next block's
    // front, so each block is read after them into the same buffer.
    const buffer = Buffer.allocUnsafe(BLOCK + from.length);
    let carried = 0;
    for (;;) {
      const read = readSync(fd, buffer, carried, BLOCK, null);
      const data = buffer.subarray(0, carried + read);
      let at = 0;
      for (let match = data.indexOf(from, at); match !== -1; match = data.indexOf(from, at)) {
        emit(data.subarray(at, match));
        emit(to);
        found = true;
        at = match + from.length;
      }
      const keep = read === 0 ? 0 : Math.min(from.length - 1, data.length - at);
      emit(data.subarray(at, data.length - keep));
      if (read === 0) return found;
      buffer.copy(buffer, 0, data.length - keep, data.length);
      carried = keep;
    }
  } finally {
    closeSync(fd);
  }
}

/** Reads a file in order and says whether the bytes expected of it are all it holds. */
class SameBytes {
  private readonly fd: number;
  private readonly block = Buffer.allocUnsafe(BLOCK);
  private buffered = Buffer.alloc(0);
  equal = true;

  constructor(path: string) {
    this.fd = openSync(path, "r");
  }

  expect(piece: Buffer): void {
    let rest = piece;
    while (this.equal && rest.length > 0) {
      if (this.buffered.length === 0) {
        const read = readSync(this.fd, this.block, 0, BLOCK, null);
        if (read === 0) this.equal = false;
        this.buffered = this.block.subarray(0, read);
      }
      const n = Math.min(rest.length, this.buffered.length);
      if (!rest.subarray(0, n).equals(this.buffered.subarray(0, n))) this.equal = false;
      rest = rest.subarray(n);
      this.buffered = this.buffered.subarray(n);
    }
  }

  /** Whether everything expected matched and nothing is left: then closes. */
  close(): boolean {
    try {
      return this.equal && this.buffered.length === 0 && readSync(this.fd, this.block, 0, 1, null) === 0;
    } finally {
      closeSync(this.fd);
    }
  }
}

/** Rewrites `path` with `from` replaced by `to` (0600, durable): written aside, then renamed over it. */
function rewrite(path: string, from: Buffer, to: Buffer): void {
  const aside = `${path}.rerun`;
  const fd = openSync(aside, "w", 0o600);
  try {
    replaced(path, from, to, (piece) => {
      if (piece.length > 0) writeSync(fd, piece);
    });
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(aside, path);
}

/**
 * The earlier report's generation time when every staged file that holds `generatedAt` (as `shown`
 * prints it) equals the file of the same name in `outDir` once it is read as that time (files without it
 * are compared by the caller, by their hashes); those staged files are then rewritten with it and named
 * in `rewritten`. Null (and nothing rewritten) when any file is new or differs in anything else.
 */
export function keepEarlierGenerationTime(
  staging: string,
  outDir: string,
  names: { data: readonly string[]; manifest: string },
  generatedAt: string,
  shown: (generatedAt: string) => string = (iso) => iso,
): { earlier: string; rewritten: string[] } | null {
  const earlier = readEarlierTime(join(outDir, names.manifest));
  if (earlier === null || earlier === generatedAt || Number.isNaN(Date.parse(earlier))) return null;
  if (names.data.some((name) => !existsSync(join(outDir, name)))) return null;
  const [from, to] = [Buffer.from(shown(generatedAt)), Buffer.from(shown(earlier))];
  const rewritten: string[] = [];
  for (const name of names.data) {
    const old = new SameBytes(join(outDir, name));
    let found = false;
    let same = false;
    try {
      found = replaced(join(staging, name), from, to, (piece) => old.expect(piece));
    } finally {
      same = old.close();
    }
    if (!found) continue; // compared byte for byte by the caller
    if (!same) return null;
    rewritten.push(name);
  }
  for (const name of rewritten) rewrite(join(staging, name), from, to);
  return { earlier, rewritten };
}
