import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeReports } from "../../src/report/writeReports.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { buildScenarioStore, SCENARIO, scenarioOnDisk } from "./scenario.ts";

describe("--help", () => {
  it.each([
    ["report", ["--from", "--to", "--db", "--out", "--format", "--tz", "--action-type"]],
    ["sql", ["<query>", "--db", "--format"]],
    ["verify", ["--db", "--manifest"]],
  ])("flagtrail %s --help lists its options", async (command, options) => {
    const result = await runCliInProcess([command, "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Usage: flagtrail ${command}`);
    for (const option of options) expect(result.stdout).toContain(option);
  });
});

describe("writeReports", () => {
  it("refuses a database path that does not exist instead of creating an empty store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-report-missing-"));
    const dbPath = join(dir, "typo.db");
    await expect(writeReports({ dbPath, from: "2024-01-01", to: "2024-01-02", outDir: dir })).rejects.toThrow(
      /No flagtrail database/,
    );
    expect(existsSync(dbPath)).toBe(false);
  });
});

describe("flagtrail report (CLI)", () => {
  it("writes the four files for a filtered period, with the rule diffs the store holds", async () => {
    const { dir, reportArgs } = scenarioOnDisk("flagtrail-report-cli-", { ruleDiffs: true, tz: true });
    const out = join(dir, "out");
    const result = await runCli([
      ...reportArgs,
      "--out",
      out,
      "--action-type",
      "gate_update,config_default_value_update",
      "--action-type",
      "experiment_start",
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/manifest_2024-03-29_2024-04-01_Europe-Berlin\.json {2}unsigned/);
    // Row counts for the CSVs only: the Markdown's would be its record count, not its lines.
    const lines = result.stdout.split("\n");
    expect(lines.find((l) => l.includes("config-edits_"))).toMatch(/\.csv {2}2 rows {2}sha256 [0-9a-f]{64}$/);
    expect(lines.find((l) => l.includes("compliance_"))).toMatch(
      /compliance_2024-03-29_2024-04-01_Europe-Berlin\.md {2}sha256 [0-9a-f]{64}$/,
    );
    const csv = readFileSync(join(out, "config-edits_2024-03-29_2024-04-01_Europe-Berlin.csv"), "utf8").split(
      "\r\n",
    );
    // Header, the two matching config edits (the late gate_update is outside the period), final CRLF.
    expect(csv.filter((l) => l.startsWith("2024-"))).toHaveLength(2);
    expect(csv[1]).toContain('"rule ""Beta users"": pass 10% → 50%');
    const manifest = JSON.parse(
      readFileSync(join(out, "manifest_2024-03-29_2024-04-01_Europe-Berlin.json"), "utf8"),
    );
    expect(manifest.parameters.actionTypes).toEqual([
      "gate_update",
      "config_default_value_update",
      "experiment_start",
    ]);
    expect(manifest.files.map((f: { name: string; rows: number }) => [f.name.split("_")[0], f.rows])).toEqual(
      [
        ["experiment-state-changes", 1],
        ["config-edits", 2],
        // The experiment start follows its approval (not in the filter, still read); the config edits have none.
        ["unreviewed-changes", 2],
        ["compliance", 3],
      ],
    );
    expect(existsSync(join(out, "compliance_2024-03-29_2024-04-01_Europe-Berlin.md"))).toBe(true);
  });

  it("takes --format repeated as the list of every value (not only the last one), as --help says", async () => {
    const { dir, reportArgs } = scenarioOnDisk("flagtrail-report-formats-");
    const out = join(dir, "out");
    const result = await runCliInProcess([...reportArgs, "--out", out, "--format", "csv", "--format", "md"]);
    expect(result.code).toBe(0);
    const kinds = readdirSync(out)
      .filter((name) => !name.startsWith("."))
      .map((name) => name.split("_")[0])
      .sort();
    expect(kinds).toEqual([
      "compliance",
      "config-edits",
      "experiment-state-changes",
      "manifest",
      "unreviewed-changes",
    ]);
    const help = await runCliInProcess(["report", "--help"]);
    expect(help.stdout).toMatch(/--format <list> +parts to write, comma-separated or repeated:/);
    // The daemon's --format is the same option: a bad value among repeated ones is a usage error.
    const daemon = await runCliInProcess(["daemon", "--once", "--format", "pdf", "--format", "md"]);
    expect(daemon.code).toBe(2);
    expect(daemon.stderr).toBe('flagtrail: --format: expected csv, md or html, got "pdf"\n');
  });

  it("exits 1 with one sentence when the output directory cannot be created", async () => {
    const { dbPath, reportArgs } = scenarioOnDisk("flagtrail-report-cli-");
    const result = await runCliInProcess([...reportArgs, "--out", join(dbPath, "reports")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^flagtrail: Cannot create the report directory .*store\.db\/reports \(ENOTDIR\): a file is in the way\.\n$/,
    );
  });

  it("exits 2 on a bad period, zone or format", async () => {
    const results = await Promise.all([
      runCliInProcess(["report", "--from", "2024-02-30", "--to", "2024-03-01", "--db", "/nonexistent.db"]),
      runCliInProcess([
        "report",
        "--from",
        "2024-03-01",
        "--to",
        "2024-03-02",
        "--tz",
        "Moon/Base",
        "--db",
        "x.db",
      ]),
      runCliInProcess(["report", "--from", "2024-03-01", "--to", "2024-03-02", "--format", "pdf"]),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2]);
  });
});

describe("report filters and coverage (issue 9)", () => {
  it("refuses an unknown action type like sync does (exit 2, closest valid names), writing nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-report-typo-"));
    const dbPath = join(dir, "store.db");
    buildScenarioStore(dbPath).close();
    const out = join(dir, "out");
    const args = ["--from", SCENARIO.from, "--to", SCENARIO.to, "--db", dbPath, "--out", out];
    const [report, sync] = await Promise.all([
      runCliInProcess(["report", ...args, "--action-type", "gate_updat"]),
      runCliInProcess(["sync", "--db", dbPath, "--action-type", "gate_updat"]),
    ]);
    expect(report.code).toBe(2);
    expect(report.stderr).toBe(sync.stderr);
    expect(report.stderr).toMatch(
      /^flagtrail: Unknown action type "gate_updat"; closest valid: gate_update, /,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("says first, in the Markdown and on stdout, when no day of the period was ever synced", async () => {
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-report-uncovered-"));
    const dbPath = join(dir, "store.db");
    buildScenarioStore(dbPath).close();
    const out = join(dir, "out");
    const result = await runCliInProcess([
      "report",
      "--from",
      "2023-01-01",
      "--to",
      "2023-01-31",
      "--db",
      dbPath,
      "--out",
      out,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")[0]).toMatch(/^No synced coverage: no day of 2023-01-01 to 2023-01-31 /);
    const md = readFileSync(join(out, "compliance_2023-01-01_2023-01-31.md"), "utf8").split("\n");
    // mdText escapes the colon (no autolink can start there).
    expect(md[2]).toMatch(/^> \*\*No synced coverage: /);

    const covered = await writeReports({ dbPath, from: SCENARIO.from, to: SCENARIO.to, outDir: out });
    expect(covered.notice).toBeNull();
    const text = readFileSync(join(out, `compliance_${SCENARIO.from}_${SCENARIO.to}.md`), "utf8");
    expect(text).not.toContain("No synced coverage");
  });
});
