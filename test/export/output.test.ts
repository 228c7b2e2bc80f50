// The stdout sink honours back-pressure: a write resolves only once a slow reader drained the stream,
// so an export to a pipe holds one batch in memory, not the whole history.
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { expect, it } from "vitest";
import { fileSink, streamSink } from "../../src/export/output.ts";

it("a write waits for 'drain' when the stream's buffer is full", async () => {
  const pending: (() => void)[] = [];
  const out = new Writable({
    highWaterMark: 16,
    write(_chunk, _encoding, callback) {
      pending.push(callback);
    },
  });
  const sink = streamSink(out);
  let resolved = false;
  const write = sink.write(["a line longer than sixteen bytes"]).then(() => {
    resolved = true;
  });
  await new Promise((r) => setImmediate(r));
  expect(resolved).toBe(false);
  for (const callback of pending.splice(0)) callback();
  await write;
  expect(resolved).toBe(true);
});

// `--out /dev/null` or a FIFO a log shipper reads: written in place. The old path renamed FILE.tmp over
// it, which (as root) replaced /dev/null with a plain 0600 file.
it("a FIFO at the output path is written in place and stays a FIFO", async () => {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-fifo-"));
  const fifo = join(dir, "events");
  execFileSync("mkfifo", [fifo]);
  const read = readFile(fifo, "utf8");
  const sink = await fileSink(fifo);
  await sink.write(["one", "two"]);
  await sink.finish();
  expect(await read).toBe("one\ntwo\n");
  expect(lstatSync(fifo).isFIFO()).toBe(true);
  expect(readdirSync(dir)).toEqual(["events"]);
});

it("a directory at the output path: one sentence, nothing written", async () => {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-outdir-"));
  await expect(fileSink(dir)).rejects.toThrow(`${dir} is a directory; an export is written to a file.`);
  expect(readdirSync(dir)).toEqual([]);
  expect(existsSync(`${dir}.tmp`)).toBe(false);
});
