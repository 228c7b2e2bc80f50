// The engine refuses a setting by its name (the start day, the time zone, the schedule, a query
// parameter), never by a command-line flag: the daemon and the demo call it with values no flag gave.
// Each command puts its own flag first, so the user still reads which flag to fix.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateSchedule } from "../../src/daemon/worker.ts";
import { DemoWorldError, runDemo } from "../../src/demo/runDemo.ts";
import { SettingError } from "../../src/errors.ts";
import { namedSink } from "../../src/export/sinks/once.ts";
import { resolvePeriod } from "../../src/report/period.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { parseSqlParams } from "../../src/sql/params.ts";
import { openStore, writeMetaValue } from "../../src/store/syncStore.ts";
import { resolveSyncOptions } from "../../src/sync/options.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";

/** The error `work` throws (it must throw). */
function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

/** A demo store made with seed 7, 500 records over 120 days: its world in meta, nothing synced yet. */
async function plantedDemoWorld(): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), "flagtrail-demo-world-")), "demo.db");
  const store = await openStore(path);
  try {
    await writeMetaValue(
      store,
      "demo.world",
      JSON.stringify({ anchor: 0, seed: 7, records: 500, days: 120 }),
    );
  } finally {
    await store.close();
  }
  return path;
}

describe("engine errors name the setting, not a flag", () => {
  it.each([
    [
      "start day",
      () => resolvePeriod("2024-02-30", "2024-03-01"),
      'The start day "2024-02-30" is not a calendar day (YYYY-MM-DD).',
    ],
    [
      "end day",
      () => resolvePeriod("2024-03-01", "24-03-02"),
      'The end day "24-03-02" is not a calendar day (YYYY-MM-DD).',
    ],
    [
      "period",
      () => resolvePeriod("2024-03-02", "2024-03-01"),
      "The start day 2024-03-02 is after the end day 2024-03-01.",
    ],
    [
      "time zone",
      () => resolvePeriod("2024-03-01", "2024-03-01", "Mars/Olympus"),
      'The time zone "Mars/Olympus" is unknown: use an IANA name like Europe/Berlin.',
    ],
    [
      "schedule",
      () => validateSchedule("every night", "UTC"),
      'The schedule "every night" is not a valid cron expression (5 or 6 fields).',
    ],
    [
      "schedule",
      () => validateSchedule("0 2 * * * * *", "UTC"),
      'The schedule "0 2 * * * * *" is not a valid cron expression (5 or 6 fields).',
    ],
    [
      "query parameter",
      () => parseSqlParams(["no-equals"]),
      'A query parameter must be name=value, got "no-equals".',
    ],
    [
      "period",
      () => resolveSyncOptions({ since: "2024-03-02", until: "2024-03-01" }),
      "The start day 2024-03-02 is after the end day 2024-03-01.",
    ],
    [
      "start day",
      () => resolveSyncOptions({ since: "2024-13-01" }),
      'The start day must be a date YYYY-MM-DD, got "2024-13-01".',
    ],
  ])("the %s", (setting, work, message) => {
    const error = thrown(work);
    expect(error).toBeInstanceOf(SettingError);
    expect(error).toMatchObject({ setting, message });
  });

  it("a sync start before 2015: the start day, and the setting that would allow it", () => {
    const error = thrown(() => resolveSyncOptions({ since: "2004-03-01", until: "2024-03-01" }));
    expect(error).toBeInstanceOf(SettingError);
    expect(error).toMatchObject({
      settings: ["start day"],
      remedy: "earlier start",
      message:
        "The start day 2004-03-01 is before 2015-01-01, older than any console audit log; allow an earlier start explicitly if it is meant.",
    });
  });

  it("export's missing config file: the setting, its own remedy", () => {
    const error = thrown(() => namedSink(undefined, "siem"));
    expect(error).toBeInstanceOf(SettingError);
    expect(error).toMatchObject({ settings: ["config file"], remedy: "config file" });
    expect((error as Error).message).not.toMatch(/--/);
  });

  it("entity history turned off and read alone: both settings", () => {
    const error = thrown(() => resolveSyncOptions({ entities: false, entitiesOnly: true }));
    expect(error).toBeInstanceOf(SettingError);
    expect(error).toMatchObject({
      settings: ["entity history", "entities only"],
      message: "Entity history cannot be both turned off and read alone.",
    });
  });

  it("the demo world: runDemo on a store made with another seed names the settings and gives the values", async () => {
    const db = await plantedDemoWorld();
    const failed = await runDemo({
      dbPath: db,
      outDir: join(db, "..", "r"),
      seed: 8,
      records: 500,
      days: 120,
    })
      .then(() => undefined)
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(DemoWorldError);
    expect(failed).toMatchObject({
      setting: "demo world",
      world: { seed: 7, records: 500, days: 120 },
      message:
        `${db} holds the demo world of seed 7, 500 records and 120 days; ` +
        "run the demo with the same seed, records and days, or on another store for a new world.",
    });
    expect((failed as Error).message).not.toMatch(/--/);
  });

  it("writeReports, as the daemon and the demo call it, names no flag", async () => {
    const failed = writeReports({
      dbPath: ":memory:",
      from: "2024-03-01",
      to: "2024-03-01",
      timeZone: "Mars/Olympus",
      outDir: "unused",
    });
    await expect(failed).rejects.toThrow(/^The time zone "Mars\/Olympus" is unknown/);
  });
});

describe("the commands name their flag", () => {
  const dir = mkdtempSync(join(tmpdir(), "flagtrail-setting-flags-"));
  const db = join(dir, "none.db");
  const config = join(dir, "flagtrail.config.json");
  writeFileSync(
    config,
    JSON.stringify({ controls: [{ id: "f", kind: "sync-freshness", severity: "low", maxAgeHours: 24 }] }),
  );
  const report = ["report", "--db", db, "--out", join(dir, "reports")];

  const cases: [string[], string][] = [
    [
      [...report, "--from", "2024-02-30", "--to", "2024-03-01"],
      '--from: The start day "2024-02-30" is not a calendar day (YYYY-MM-DD).',
    ],
    [
      [...report, "--from", "2024-03-01", "--to", "2024-02-31"],
      '--to: The end day "2024-02-31" is not a calendar day (YYYY-MM-DD).',
    ],
    [
      [...report, "--from", "2024-03-02", "--to", "2024-03-01"],
      "--from/--to: The start day 2024-03-02 is after the end day 2024-03-01.",
    ],
    [
      [...report, "--from", "2024-03-01", "--to", "2024-03-01", "--tz", "Mars/Olympus"],
      '--tz: The time zone "Mars/Olympus" is unknown: use an IANA name like Europe/Berlin.',
    ],
    [
      ["check", "--db", db, "--config", config, "--from", "2024-03-05", "--to", "2024-03-01"],
      "--from/--to: The start day 2024-03-05 is after the end day 2024-03-01.",
    ],
    [
      ["export", "--db", db, "--from", "2024-03-01", "--to", "2024-02-30"],
      '--to: The end day "2024-02-30" is not a calendar day (YYYY-MM-DD).',
    ],
    [
      ["sql", "SELECT 1", "--db", db, "--param", "no-equals"],
      '--param: A query parameter must be name=value, got "no-equals".',
    ],
    [
      ["daemon", "--db", db, "--cron", "every night", "--api-key", "console-x"],
      '--cron: The schedule "every night" is not a valid cron expression (5 or 6 fields).',
    ],
    [
      ["daemon", "--db", db, "--tz", "Mars/Olympus", "--api-key", "console-x"],
      '--tz: The time zone "Mars/Olympus" is unknown: use an IANA name like Europe/Berlin.',
    ],
    [
      ["sync", "--db", db, "--since", "2024-03-02", "--until", "2024-03-01"],
      "--since/--until: The start day 2024-03-02 is after the end day 2024-03-01.",
    ],
    [
      ["sync", "--db", db, "--since", "2004-03-01", "--until", "2024-03-01"],
      "--since: The start day 2004-03-01 is before 2015-01-01, older than any console audit log; " +
        "allow an earlier start explicitly if it is meant (--allow-before-2015).",
    ],
    [
      ["sync", "--db", db, "--no-entities", "--entities-only"],
      "--no-entities and --entities-only: Entity history cannot be both turned off and read alone.",
    ],
    [["sync", "--db", db, "--page-size", "0"], "--page-size: The page size must be at least 1."],
    [["sync", "--db", db, "--concurrency", "65"], "--concurrency: The concurrency must be at most 64."],
    [
      ["daemon", "--db", db, "--concurrency", "0", "--api-key", "console-x"],
      "--concurrency: The concurrency must be at least 1.",
    ],
    [
      ["daemon", "--db", db, "--since", "2004-03-01", "--api-key", "console-x"],
      "--since: The start day 2004-03-01 is before 2015-01-01, older than any console audit log; " +
        "allow an earlier start explicitly if it is meant (--allow-before-2015).",
    ],
  ];
  it("export --sink without a config file names --config as the way to give one", async () => {
    const empty = mkdtempSync(join(tmpdir(), "flagtrail-no-config-"));
    const run = await runCliInProcess(["export", "--db", db, "--sink", "siem"], { cwd: empty });
    expect(run.stderr).toBe(
      "flagtrail: No config file: the sinks are read from flagtrail.config.json, FLAGTRAIL_CONFIG's file " +
        "or the one given (--config).\n",
    );
    expect(run.code).toBe(2);
  });

  it("demo: a store of another world names the flags and the values to pass", async () => {
    const demoDb = await plantedDemoWorld();
    const run = await runCliInProcess(["demo", "--db", demoDb, "--out", join(dir, "demo"), "--seed", "8"]);
    expect(run.stderr).toBe(
      `flagtrail: ${demoDb} holds the demo world --seed 7 --records 500 --days 120; ` +
        "pass the same values, or another --db for a new world.\n",
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
  });

  it.each(cases.map(([args, sentence]) => [args[0], sentence, args] as const))(
    "%s: %s",
    async (_, sentence, args) => {
      const run = await runCliInProcess(args);
      expect(run.stderr).toBe(`flagtrail: ${sentence}\n`);
      expect(run.code).toBe(2);
    },
  );
});
