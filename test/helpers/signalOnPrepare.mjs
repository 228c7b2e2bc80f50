// Test preload (`node --import`): the process sends itself $FLAGTRAIL_TEST_SIGNAL when better-sqlite3
// prepares the statement $FLAGTRAIL_TEST_SIGNAL_SQL (exactly that text), with no timing. At exit it writes
// to $FLAGTRAIL_TEST_SQL_LOG whether it signalled and every statement prepared after: what ran on.
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const signal = process.env.FLAGTRAIL_TEST_SIGNAL;
const at = process.env.FLAGTRAIL_TEST_SIGNAL_SQL;
const logPath = process.env.FLAGTRAIL_TEST_SQL_LOG;
if (signal && at && logPath) {
  // The CLI's own instance: ESM imports of a CommonJS package share require's cache.
  const Database = createRequire(import.meta.url)("better-sqlite3");
  const { prepare } = Database.prototype;
  const seen = { sent: false, after: [] };
  Database.prototype.prepare = function prepareWatched(sql) {
    if (seen.sent) seen.after.push(sql);
    else if (sql === at) {
      seen.sent = true;
      process.kill(process.pid, signal);
    }
    return prepare.call(this, sql);
  };
  process.on("exit", () => writeFileSync(logPath, JSON.stringify(seen)));
}
