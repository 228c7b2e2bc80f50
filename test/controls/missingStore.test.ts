// Defects seen by trying the CLI as a new user (helper h40): `check`, `waive` and `unwaive` given a
// --db path that does not exist create an empty store there (and `check` then passes its change
// controls on it, exit 0), and `check --project NAME` on an existing store registers NAME as a new
// project. The read commands refuse both ("No flagtrail database at …", "holds no project …"); these
// must too, so a typo in a CI job's path or project never turns into a green check.
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { simEnv, syncedTestStore, withDb } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "../pg/cluster.ts";

function configFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), "flagtrail-h40-")), "flagtrail.config.json");
  const controls = [{ id: "api", kind: "restricted-actor", severity: "high", actors: ["CONSOLE API"] }];
  writeFileSync(path, JSON.stringify({ controls }));
  return path;
}

describe("check, waive and unwaive on a --db path that does not exist", () => {
  it("check exits 1 naming the missing store and creates no file", async () => {
    const missing = join(mkdtempSync(join(tmpdir(), "flagtrail-h40-")), "typo.db");
    const result = await runCliInProcess(["check", "--db", missing, "--config", configFile()]);
    expect(existsSync(missing)).toBe(false);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("No flagtrail database");
  });

  it.each([
    ["waive", "api:x", "--reason", "r", "--by", "b"],
    ["unwaive", "api:x", "--by", "b"],
    ["export", "--cursor", "siem", "--out", "events.ndjson"],
  ])("%s exits 1 naming the missing store and creates no file", async (...args) => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-h40-"));
    const missing = join(dir, "typo.db");
    const result = await runCliInProcess([...args, "--db", missing], { cwd: dir });
    expect(existsSync(missing)).toBe(false);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`No flagtrail database at ${missing}.`);
  });

  it("check on an empty PostgreSQL database exits 1 and makes no table there", async () => {
    const url = await freshDatabase("missing");
    const result = await runCliInProcess(["check", "--db", url, "--config", configFile()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("is not a flagtrail database (no migrations applied).");
    const tables = await queryOnce(
      url,
      "SELECT table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    );
    expect(tables).toEqual([]);
  });
});

describe("--db given empty", () => {
  // An unset shell variable in `--db "$STORE"`: refused rather than read as absent, which would use
  // FLAGTRAIL_DB or ./flagtrail.db instead of the store meant.
  it.each([
    ["status"],
    ["sql", "SELECT 1"],
    ["verify"],
    ["check", "--config", "CONFIG"],
    ["waive", "api:x", "--reason", "r", "--by", "b"],
    ["export", "--cursor", "siem", "--out", "events.ndjson"],
  ])("%s is bad usage (exit 2) and creates no store", async (...args) => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-h41-"));
    const other = join(dir, "other.db");
    const given = args.map((a) => (a === "CONFIG" ? configFile() : a));
    const result = await runCliInProcess([...given, "--db", ""], { cwd: dir, env: { FLAGTRAIL_DB: other } });
    expect(result.stderr.trim()).toBe("flagtrail: The database path is empty.");
    expect(result.code).toBe(2);
    expect(existsSync(other)).toBe(false);
    expect(existsSync(join(dir, "flagtrail.db"))).toBe(false);
  });
});

describe("check --project with a name the store does not hold", () => {
  let sim: RunningSimulator;
  let db: string;

  beforeAll(async () => {
    ({ sim, db } = await syncedTestStore());
  });

  afterAll(async () => {
    await sim?.close();
  });

  it("is refused like status refuses it, and registers no project", async () => {
    const env = simEnv(sim, db, { FLAGTRAIL_CONFIG: configFile() });
    const status = await runCliInProcess(["status", "--project", "typo"], { env });
    expect(status.stderr).toContain("holds no project typo");
    const check = await runCliInProcess(["check", "--project", "typo"], { env });
    expect(check.code).not.toBe(0);
    expect(check.stderr).toContain("holds no project typo");
    const registered = withDb(db, (d) =>
      d.prepare("SELECT key FROM meta WHERE key LIKE 'project:%'").all(),
    ) as { key: string }[];
    expect(registered.map((r) => r.key)).not.toContain("project:typo");
    expect(existsSync(db.replace(/\.db$/, ".typo.db"))).toBe(false);
  });
});
