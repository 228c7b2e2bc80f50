// Test preload (`node --import`): a report sends itself $FLAGTRAIL_TEST_SIGNAL at its first write into a
// staged CSV (TextFile's first 64 KiB flush: the change CSVs' pass is under way), with no timing. At exit
// it writes to $FLAGTRAIL_TEST_CSV_LOG how many writes and fsyncs the staged CSVs had: a pass that ran to
// its end fsynced each of its files.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const signal = process.env.FLAGTRAIL_TEST_SIGNAL;
const logPath = process.env.FLAGTRAIL_TEST_CSV_LOG;
if (signal && logPath) {
  const { openSync, writeSync, fsyncSync, closeSync, writeFileSync } = fs;
  const csvs = new Set();
  const seen = { writes: 0, fsyncs: 0 };
  fs.openSync = function openTracked(path, ...rest) {
    const fd = openSync.call(this, path, ...rest);
    if (typeof path === "string" && path.includes(".flagtrail-report-") && path.endsWith(".csv"))
      csvs.add(fd);
    return fd;
  };
  fs.writeSync = function writeTracked(fd, ...rest) {
    if (csvs.has(fd)) {
      seen.writes += 1;
      if (seen.writes === 1) process.kill(process.pid, signal);
    }
    return writeSync.call(this, fd, ...rest);
  };
  fs.fsyncSync = function fsyncTracked(fd) {
    if (csvs.has(fd)) seen.fsyncs += 1;
    return fsyncSync.call(this, fd);
  };
  // A descriptor's number is reused once closed.
  fs.closeSync = function closeTracked(fd) {
    csvs.delete(fd);
    return closeSync.call(this, fd);
  };
  syncBuiltinESMExports();
  process.on("exit", () => writeFileSync(logPath, JSON.stringify(seen)));
}
