// `--db-file PATH`: the store's path or URL read from a file (trimmed), so that a PostgreSQL password
// is not on the command line where `ps` shows it. Unreadable or empty: a usage error naming the path.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";

describe("--db-file", () => {
  it("reads the store's location from the file; an empty or missing file is a usage error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-dbfile-"));
    const store = join(dir, "missing.db");
    const file = join(dir, "db-url");
    writeFileSync(file, `  ${store}\n`);
    const read = await runCli(["status", "--db-file", file]);
    expect(read.code).toBe(1);
    expect(read.stderr).toBe(`flagtrail: No flagtrail database at ${store}. Run \`flagtrail sync\` first.\n`);

    writeFileSync(file, "\n");
    const empty = await runCliInProcess(["status", "--db-file", file]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(`flagtrail: The database URL file ${file} is empty.\n`);
    const missing = await runCliInProcess([
      "report",
      "--from",
      "2024-01-01",
      "--to",
      "2024-01-02",
      "--db-file",
      store,
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`flagtrail: Cannot read the database URL file ${store} (ENOENT).\n`);
    const help = await runCliInProcess(["sync", "--help"]);
    expect(help.stdout).toMatch(/--db-file <path>/);
    expect(help.stdout).toMatch(/visible to other users \(ps\)/);
  });
});

// Every command that takes --db-file must open the store the file names. Run from a directory without a
// ./flagtrail.db and without FLAGTRAIL_DB, so that a command dropping the option would fall back to the
// default store and fail or print something else. The list is held to the CLI's own: a command that gains
// --db-file later must join it.
describe("--db-file in every command that takes it", () => {
  let sim: RunningSimulator;
  let dir: string;
  let store: string;
  let dbFile: string;
  let env: Record<string, string | undefined>;
  const tested = new Set<string>();
  const cli = (args: string[]) => {
    tested.add(args[0] ?? "");
    return runCliInProcess([...args, "--db-file", dbFile], { env, cwd: join(dir, "elsewhere") });
  };

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 200, days: 20, timeZone: "UTC" });
    dir = mkdtempSync(join(tmpdir(), "flagtrail-dbfile-all-"));
    mkdirSync(join(dir, "elsewhere"));
    mkdirSync(join(dir, "stores"));
    store = join(dir, "stores", "audit.db");
    dbFile = join(dir, "db-location");
    writeFileSync(dbFile, `${store}\n`);
    const config = join(dir, "flagtrail.config.json");
    // A freshness control no sync can meet (0.36 s), low severity: a finding to waive that fails no check.
    const stale = { id: "stale", kind: "sync-freshness", severity: "low", maxAgeHours: 0.0001 };
    writeFileSync(config, JSON.stringify({ controls: [stale] }));
    const { FLAGTRAIL_DB: _none, ...simulated } = simEnv(sim, "unused");
    env = { ...simulated, FLAGTRAIL_CONFIG: config };
  });
  afterAll(async () => {
    await sim?.close();
  });

  it("opens the store the file names, never ./flagtrail.db", async () => {
    const sync = await cli(["sync", "--since", daysAgo(10), "--quiet"]);
    expect(sync.stderr).toBe("");
    expect(sync.code).toBe(0);
    expect(existsSync(store)).toBe(true);
    const daemon = await cli(["daemon", "--once", "--quiet"]);
    expect(daemon.code).toBe(0);
    const staleAfter = Date.now() + 0.0001 * 3_600_000;

    const status = await cli(["status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^Database ${store}\\n`));
    const sql = await cli(["sql", "SELECT count(*) AS n FROM audit_logs", "--json"]);
    expect(sql.stderr).toBe("");
    expect(sql.code).toBe(0);
    const [row] = JSON.parse(sql.stdout) as { n: number }[];
    expect(row?.n).toBeGreaterThan(0);
    const doctor = await cli(["doctor"]);
    expect(doctor.stdout).toMatch(new RegExp(`^ok +store +${store} opens \\(SQLite\\)$`, "m"));
    expect(doctor.stdout).toMatch(/^ok +migrations +current/m);
    const verify = await cli(["verify"]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^OK: hash chain of \d+ records intact/m);
    const report = await cli(["report", "--from", daysAgo(5), "--to", daysAgo(1), "--out", join(dir, "r")]);
    expect(report.code).toBe(0);
    expect(report.stdout).toContain(`Manifest: ${join(dir, "r")}/manifest_`);
    const exported = await cli(["export", "--from", daysAgo(5), "--to", daysAgo(1)]);
    expect(exported.code).toBe(0);
    expect(exported.stdout.split("\n").filter(Boolean).length).toBeGreaterThan(0);

    // The freshness control finds the last sync stale once 0.36 s passed (waited for, not assumed); its
    // low severity fails no --fail-on high.
    while (Date.now() <= staleAfter) await new Promise((resolve) => setTimeout(resolve, 50));
    const check = await cli(["check", "--format", "json", "--fail-on", "high"]);
    expect(check.code).toBe(0);
    const [finding] = JSON.parse(check.stdout) as { id: string; control: string }[];
    expect(finding?.control).toBe("stale");
    const id = finding?.id ?? "";
    const waive = await cli(["waive", id, "--by", "Ann", "--reason", "known"]);
    expect(waive.stderr).toBe("");
    expect(waive.code).toBe(0);
    const unwaive = await cli(["unwaive", id, "--by", "Ann", "--reason", "done"]);
    expect(unwaive.stderr).toBe("");
    expect(unwaive.code).toBe(0);
    expect(readdirSync(join(dir, "elsewhere"))).toEqual([]);

    const taking = buildProgram()
      .commands.filter((c) => c.options.some((o) => o.long === "--db-file"))
      .map((c) => c.name());
    expect([...tested].sort()).toEqual(taking.sort());
  });
});
