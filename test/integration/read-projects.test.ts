// status, verify and sql on a store holding two projects (issue 12), through the real CLI: two
// simulators with overlapping record ids synced into one SQLite store. Without --project each command
// reads both projects under their names; with it, one project exactly as a single-project store prints.
// One call of each command is spawned (end to end); the others run the CLI in this process.
import { existsSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { MANIFEST_FORMAT } from "../../src/manifest/format.ts";
import { projectFilePath } from "../../src/storeLocation.ts";
import { runCliInProcess as cli } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { tempDbPath, withDb } from "../helpers/simSync.ts";
import { syncBoth, type TwoProjects, useTwoProjects } from "../helpers/twoProjects.ts";

const twoProjects = useTwoProjects();
// One store for the file (the simulators close after the first test; their sizes are kept): the
// tests only read it, but for verify's tampering, which comes last.
let db: string;
let euSize: number;
let usSize: number;
let projects: TwoProjects;

beforeAll(async () => {
  projects = await twoProjects();
  db = tempDbPath("flagtrail-reads-");
  await syncBoth(projects, db);
  [euSize, usSize] = [projects.sims.eu.control.size(), projects.sims.us.control.size()];
});

/** A report manifest of no files over an empty store: what verify --manifest reads, nothing more. */
function emptyManifest() {
  return {
    format: MANIFEST_FORMAT,
    flagtrailVersion: "0.0.0",
    generatedAt: new Date(0).toISOString(),
    parameters: { from: "2024-01-01", to: "2024-01-31", timeZone: "UTC", actionTypes: null, formats: [] },
    period: { start: 0, end: 0 },
    files: [],
    store: { records: 0, chainHead: null },
  };
}

describe("read commands on a store of two projects", () => {
  it("status shows each project's namespace under its name, in text and JSON; --project shows one as before", async () => {
    expect(euSize).not.toBe(usSize);

    // Independent reads of one store: run at once.
    const [json, text, us, usText, unknown] = await Promise.all([
      runCli(["status", "--db", db, "--json"]),
      cli(["status", "--db", db]),
      cli(["status", "--db", db, "--project", "us", "--json"]),
      cli(["status", "--db", db, "--project", "us"]),
      cli(["status", "--db", db, "--project", "apac"]),
    ]);
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const all = JSON.parse(json.stdout) as {
      projects: { project: string; database: string; records: { total: number }; runs: unknown[] }[];
    };
    expect(all.projects.map((p) => [p.project, p.records.total, p.database])).toEqual([
      ["eu", euSize, projectFilePath(db, "eu")],
      ["us", usSize, projectFilePath(db, "us")],
    ]);
    for (const p of all.projects) expect(p.runs).toHaveLength(1);

    expect(text.code).toBe(0);
    const blocks = text.stdout.split(/^Project /m).filter((b) => b !== "");
    expect(blocks.map((b) => b.split("\n")[0])).toEqual(["eu", "us"]);
    expect(blocks[0]).toContain(`Records: ${euSize}, `);
    expect(blocks[1]).toContain(`Database ${projectFilePath(db, "us")}\n`);
    expect(blocks[1]).toContain(`Records: ${usSize}, `);

    // One project asked for: today's output of that namespace, no project heading.
    expect(us.code).toBe(0);
    const usStatus = JSON.parse(us.stdout);
    expect(usStatus.projects).toBeUndefined();
    expect(usStatus).toEqual({ ...all.projects[1], project: undefined, database: projectFilePath(db, "us") });
    expect(usText.stdout).toBe(`${blocks[1]?.slice("us\n".length).trimEnd()}\n`);

    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`flagtrail: ${db} holds no project apac (it holds eu, us).\n`);
  });

  it("sql runs in each project and prefixes the project; --project runs in one, output unchanged", async () => {
    const count = "SELECT count(*) AS n FROM audit_logs";

    const [table, json, csv, nl, eu, ids, clash, bad] = await Promise.all([
      runCli(["sql", count, "--db", db]),
      cli(["sql", count, "--db", db, "--json"]),
      cli(["sql", count, "--db", db, "--csv"]),
      cli(["sql", count, "--db", db, "--nl"]),
      cli(["sql", count, "--db", db, "--project", "eu", "--json"]),
      cli(["sql", "SELECT id FROM audit_logs ORDER BY id", "--db", db, "--csv"]),
      cli(["sql", "SELECT 'x' AS project", "--db", db]),
      cli(["sql", "SELECT nope FROM audit_logs", "--db", db]),
    ]);
    expect(table.stderr).toBe("");
    expect(table.stdout).toBe(
      [
        "project | n",
        `--------+-${"-".repeat(String(euSize).length)}`,
        `eu      | ${euSize}`,
        `us      | ${usSize}`,
        "(2 rows)",
        "",
      ].join("\n"),
    );
    expect(JSON.parse(json.stdout)).toEqual([
      { project: "eu", n: euSize },
      { project: "us", n: usSize },
    ]);
    expect(csv.stdout).toBe(`project,n\r\neu,${euSize}\r\nus,${usSize}\r\n`);
    expect(nl.stdout).toBe(`{"project":"eu","n":${euSize}}\n{"project":"us","n":${usSize}}\n`);

    expect(eu.stdout).toBe(`[\n  {"n":${euSize}}\n]\n`);

    // The projects' record ids overlap: the same id is a row of each, told apart by its project.
    const rows = ids.stdout.trimEnd().split("\r\n").slice(1);
    expect(rows).toHaveLength(euSize + usSize);
    const byProject = { eu: new Set<string>(), us: new Set<string>() };
    for (const row of rows) {
      const [project, id] = row.split(",") as ["eu" | "us", string];
      byProject[project].add(id);
    }
    expect(rows.findIndex((r) => r.startsWith("us,"))).toBe(euSize); // eu's rows, then us's
    const shared = [...byProject.eu].filter((id) => byProject.us.has(id));
    expect(shared.length).toBeGreaterThan(0);

    // A column of the query named project would be ambiguous in the combined result: refused.
    expect(clash.stderr).toMatch(/^flagtrail: refused: the query's result has a column named project/);
    expect(clash.code).toBe(2);
    expect(clash.stdout).toBe("");
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
  });

  it("verify checks each project; a row tampered in us's file fails us alone, exit 1 naming it", async () => {
    // A manifest records one chain head, not whose: with several projects verify asks which.
    const manifest = join(mkdtempSync(join(tmpdir(), "flagtrail-reads-manifest-")), "manifest.json");
    writeFileSync(manifest, JSON.stringify(emptyManifest()));
    const [clean, ambiguous, euManifest] = await Promise.all([
      cli(["verify", "--db", db]),
      cli(["verify", "--db", db, "--manifest", manifest]),
      cli(["verify", "--db", db, "--manifest", manifest, "--project", "eu"]),
    ]);
    expect(clean.stderr).toBe("");
    expect(clean.code).toBe(0);
    const lines = clean.stdout.trimEnd().split("\n");
    expect(lines.map((l) => l.slice(0, l.indexOf(": OK: hash chain of ")))).toEqual([
      "Project eu",
      "Project us",
    ]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toBe(
      "flagtrail: The manifest records one chain head, not whose, and the store holds 2 projects (eu, us): pass --project with the project its report covers.\n",
    );
    expect(euManifest.stderr).toBe("");
    expect(euManifest.stdout).toMatch(
      /^OK: hash chain of \d+ records intact.*; 0 report files match the manifest, /,
    );

    const usFile = projectFilePath(db, "us");
    const seq = withDb(usFile, (d) => d.prepare("SELECT max(seq) FROM audit_logs").pluck().get()) as number;
    const writable = new Database(usFile);
    try {
      writable
        .prepare(
          "UPDATE audit_logs SET raw_data = json_set(raw_data, '$.updatedBy', 'Someone Else') WHERE seq = ?",
        )
        .run(seq - 3);
    } finally {
      writable.close();
    }

    const broken = await runCli(["verify", "--db", db]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(
      new RegExp(
        `^flagtrail: 1 of 2 projects failed: us \\(broken chain at seq ${seq - 3} .*record_hash .* differs`,
      ),
    );
    expect(broken.stdout).toMatch(/^Project eu: OK: hash chain of \d+ records intact/);
    expect(broken.stdout).toMatch(new RegExp(`\\nProject us: FAILED: broken chain at seq ${seq - 3} `));

    // Each project on its own: eu as a single-project store prints it, us fails with its own sentence.
    const eu = await cli(["verify", "--db", db, "--project", "eu"]);
    expect(eu.code).toBe(0);
    expect(eu.stdout).toMatch(/^OK: hash chain of \d+ records intact/);
    const us = await cli(["verify", "--db", db, "--project", "us"]);
    expect(us.code).toBe(1);
    expect(us.stderr).toMatch(new RegExp(`^flagtrail: Broken chain at seq ${seq - 3} `));
  });

  it("a registered project whose file is gone is named as missing, by reads and by sync (which makes no new one)", async () => {
    const usFile = projectFilePath(db, "us");
    renameSync(usFile, `${usFile}.moved`);
    try {
      const [status, eu, sync] = await Promise.all([
        cli(["status", "--db", db]),
        cli(["status", "--db", db, "--project", "eu", "--json"]),
        // Its simulator is gone too: the open fails before any request.
        runCli([...projects.syncArgs(db), "--project", "us"], { env: projects.env }),
      ]);
      expect(sync.code).toBe(1);
      expect(sync.stderr).toMatch(/^flagtrail: Project us is registered in .*, but its file .* is missing/);
      expect(existsSync(usFile)).toBe(false);
      expect(status.code).toBe(1);
      expect(status.stdout).toBe("");
      expect(status.stderr).toBe(
        `flagtrail: Project us is registered in ${db}, but its file ${usFile} is missing (moved or deleted); restore it from the backup taken with the store.\n`,
      );
      expect(eu.code).toBe(0);
      expect(JSON.parse(eu.stdout).records.total).toBe(euSize);
    } finally {
      renameSync(`${usFile}.moved`, usFile);
    }
  });
});
