// Where an export's NDJSON goes: a file made durable before it appears under its name, or stdout. Each
// batch is written and awaited before the next is read, so memory holds one batch whatever the size.
import { once } from "node:events";
import { statSync } from "node:fs";
import { type FileHandle, open, rename, rm } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Writable } from "node:stream";
import { asDiskFull, FlagtrailError } from "../errors.ts";
import { syncDirectory } from "../report/publish.ts";

/** Receives the lines of one export, a batch at a time. */
export interface LineSink {
  write(lines: readonly string[]): Promise<void>;
  /** The output is complete (and, for a file, durable under its name). */
  finish(): Promise<void>;
  /** The export failed: nothing is left under the output's name that was not there before. */
  abandon(): Promise<void>;
}

function text(lines: readonly string[]): string {
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/**
 * A device or pipe already at the path (/dev/null, /dev/stdout, a FIFO a shipper reads): written in
 * place, since renaming a temporary file over it would replace the device with a plain file.
 */
export function isSpecialFile(path: string): boolean {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat !== undefined && !stat.isFile() && !stat.isDirectory();
}

/**
 * A file written as FILE.tmp (0600: events name people), fsynced, renamed to FILE and the directory
 * fsynced: when finish() resolves, FILE is whole on disk; a crash before leaves FILE as it was.
 */
export async function fileSink(path: string): Promise<LineSink> {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory())
    throw new FlagtrailError(`${path} is a directory; an export is written to a file.`);
  if (isSpecialFile(path)) return inPlaceSink(path);
  const tmp = `${path}.tmp`;
  const fail = (error: unknown, what: string): never => {
    throw (
      asDiskFull(error, tmp) ??
      new FlagtrailError(`Cannot ${what} ${tmp} (${(error as NodeJS.ErrnoException).code ?? "error"}).`, {
        cause: error,
      })
    );
  };
  let handle: FileHandle | undefined;
  try {
    handle = await open(tmp, "w", 0o600);
    await handle.chmod(0o600);
  } catch (error) {
    await handle?.close();
    fail(error, "create");
  }
  const fh = handle as FileHandle;
  let closed = false;
  const close = async () => {
    if (!closed) await fh.close();
    closed = true;
  };
  return {
    async write(lines) {
      if (lines.length === 0) return;
      try {
        await fh.write(text(lines));
      } catch (error) {
        fail(error, "write");
      }
    },
    async finish() {
      try {
        await fh.sync();
        await close();
        await rename(tmp, path);
      } catch (error) {
        fail(error, "complete");
      }
      syncDirectory(dirname(resolve(path)));
    },
    async abandon() {
      await close().catch(() => {});
      await rm(tmp, { force: true });
    },
  };
}

/** A device or pipe, opened as it is (no temporary file, no mode change) and closed at the end. */
async function inPlaceSink(path: string): Promise<LineSink> {
  const handle = await open(path, "w").catch((error: NodeJS.ErrnoException) => {
    throw new FlagtrailError(`Cannot open ${path} (${error.code ?? "error"}).`, { cause: error });
  });
  return {
    async write(lines) {
      if (lines.length > 0) await handle.write(text(lines));
    },
    finish: () => handle.close(),
    abandon: () => handle.close(),
  };
}

/** stdout (or any stream), honouring back-pressure: a slow reader slows the export, never its memory. */
export function streamSink(out: Writable): LineSink {
  return {
    async write(lines) {
      if (lines.length > 0 && !out.write(text(lines))) await once(out, "drain");
    },
    async finish() {},
    async abandon() {},
  };
}
