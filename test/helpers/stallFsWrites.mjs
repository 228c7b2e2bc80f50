// Test preload (`node --import`): once $FLAGTRAIL_TEST_STALL_FS_WRITES calls of fs.write/fs.writev (the
// callback API a write stream on a descriptor uses) have completed, every later one never calls back and
// the process stays alive. A test can then stop a report that is certainly half-way through a CSV in its
// staging directory, without any timing. (stallWrites.mjs does the same for FileHandle#write.)
import fs from "node:fs";

const after = Number(process.env.FLAGTRAIL_TEST_STALL_FS_WRITES ?? "0");
if (after > 0) {
  let calls = 0;
  for (const name of ["write", "writev"]) {
    const original = fs[name];
    fs[name] = function stalled(...args) {
      calls += 1;
      if (calls <= after) return original.apply(this, args);
      setInterval(() => {}, 1 << 30);
    };
  }
}
