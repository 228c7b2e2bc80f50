// The stdout sink honours back-pressure: a write resolves only once a slow reader drained the stream,
// so an export to a pipe holds one batch in memory, not the whole history.
import { Writable } from "node:stream";
import { expect, it } from "vitest";
import { streamSink } from "../../src/export/output.ts";

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
