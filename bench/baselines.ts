// What a user would reach for instead of flagtrail, on the very JSON the sync stored, in the same run:
// `sqlite-utils insert --pk id` (a table of the records' fields, nested ones as JSON text) and a raw
// `executemany` of the same columns through Python's sqlite3 (the floor: one INSERT per record, one
// transaction, no index but the key). Both are timed wall-clock as a whole process, like the sync.
//
// sqlite-utils is found on PATH (Debian: `apt-get install sqlite-utils`), as the Python module
// (`python3 -m sqlite_utils`), or installed once with pip into a virtual environment under
// ~/.cache/flagtrail-bench (only where pip reaches PyPI). Missing Python or sqlite-utils leaves those
// figures out, with a note on stderr, instead of failing the bench.
import { execFile } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const VENV = join(homedir(), ".cache", "flagtrail-bench", "venv");

async function works(command: string, args: string[]): Promise<boolean> {
  try {
    await run(command, args, { timeout: 60_000 });
    return true;
  } catch {
    return false;
  }
}

/** The command line that runs sqlite-utils here, or null (a note says why). */
async function sqliteUtils(): Promise<string[] | null> {
  if (await works("sqlite-utils", ["--version"])) return ["sqlite-utils"];
  if (!(await works("python3", ["--version"]))) return null;
  if (await works("python3", ["-m", "sqlite_utils", "--version"])) return ["python3", "-m", "sqlite_utils"];
  const venvPython = join(VENV, "bin", "python3");
  if (!existsSync(venvPython) && !(await works("python3", ["-m", "venv", VENV]))) return null;
  const pip = [venvPython, "-m", "pip", "install", "--quiet", "--retries", "0", "--timeout", "10"];
  if (
    !(await works(venvPython, ["-m", "sqlite_utils", "--version"])) &&
    !(await works(pip[0]!, [...pip.slice(1), "sqlite-utils"]))
  )
    return null;
  return [venvPython, "-m", "sqlite_utils"];
}

/** Every top-level field of the records, each a column; nested values as JSON text (as sqlite-utils). */
const EXECUTEMANY = `
import json, sqlite3, sys
rows = json.load(open(sys.argv[1]))
cols = sorted({k for r in rows for k in r})
db = sqlite3.connect(sys.argv[2])
db.execute("CREATE TABLE audit_logs (" + ", ".join('"%s"' % c + (" TEXT PRIMARY KEY" if c == "id" else "") for c in cols) + ")")
def v(x): return json.dumps(x) if isinstance(x, (dict, list)) else x
with db:
    db.executemany("INSERT INTO audit_logs VALUES (" + ",".join("?" * len(cols)) + ")", ([v(r.get(c)) for c in cols] for r in rows))
db.close()
`;

async function timed(command: string, args: string[]): Promise<number> {
  const started = performance.now();
  await run(command, args, { maxBuffer: 1 << 24 });
  return performance.now() - started;
}

/**
 * Records/s (and bytes per record) of sqlite-utils and of a raw executemany storing `records` (distinct
 * ids) into fresh files under `dir`.
 */
export async function baselineIngest(
  records: readonly unknown[],
  dir: string,
): Promise<Record<string, number>> {
  const json = join(dir, "records.json");
  writeFileSync(json, JSON.stringify(records));
  const figures: Record<string, number> = {};
  const perS = (ms: number) => Math.round((records.length / ms) * 1000);
  const utils = await sqliteUtils();
  if (utils === null) {
    process.stderr.write(
      "bench: sqlite-utils figures skipped (no python3, or sqlite-utils not installable: apt-get install sqlite-utils)\n",
    );
  } else {
    const db = join(dir, "sqlite-utils.db");
    const ms = await timed(utils[0]!, [...utils.slice(1), "insert", db, "audit_logs", json, "--pk", "id"]);
    figures.ingest_sqlite_utils_records_per_s = perS(ms);
    figures.ingest_sqlite_utils_bytes_per_record = Math.round(statSync(db).size / records.length);
  }
  if (await works("python3", ["-c", "import sqlite3"])) {
    const ms = await timed("python3", ["-c", EXECUTEMANY, json, join(dir, "executemany.db")]);
    figures.ingest_executemany_records_per_s = perS(ms);
  } else {
    process.stderr.write("bench: executemany figure skipped (no python3 with sqlite3)\n");
  }
  return figures;
}
