// Every temporary file of a test run lives under one directory, removed when the run ends. The tests,
// and the CLIs and simulators they spawn, make hundreds of stores and report directories in tmpdir()
// each run; left in /tmp they added up to gigabytes on a developer's machine. os.tmpdir() reads TMPDIR,
// and the workers and every process they spawn inherit it. FLAGTRAIL_KEEP_TEST_TMP=1 keeps the files
// (for looking at what a failing test left).
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), "flagtrail-test-run-"));
  // Traversable, as /tmp is: the tests' PostgreSQL runs as another user under it (test/pg/server.ts).
  // What each test makes inside is its own mkdtemp directory, 0700.
  chmodSync(root, 0o755);
  process.env.TMPDIR = root;
  return () => {
    if (process.env.FLAGTRAIL_KEEP_TEST_TMP === "1") console.log(`Test files kept in ${root}`);
    else rmSync(root, { recursive: true, force: true });
  };
}
