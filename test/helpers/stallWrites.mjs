// Test preload (`node --import`): once $FLAGTRAIL_TEST_STALL_AFTER_WRITES writes to a file handle
// (FileHandle#write) have completed, every later one never completes, and the process stays alive. A
// test can then kill -9 an export that is certainly half-way through its file, without any timing.
import { open } from "node:fs/promises";

const after = Number(process.env.FLAGTRAIL_TEST_STALL_AFTER_WRITES ?? "0");
if (after > 0) {
  const probe = await open(process.execPath, "r");
  const proto = Object.getPrototypeOf(probe);
  await probe.close();
  const write = proto.write;
  let writes = 0;
  proto.write = function stalledWrite(...args) {
    writes += 1;
    if (writes <= after) return write.apply(this, args);
    return new Promise(() => {
      setInterval(() => {}, 1 << 30);
    });
  };
}
