// `flagtrail report` on a SQLite store holding two projects (issue 12), through the real CLI after a
// real sync of two simulators: by default one combined report set, checked against the reports
// `--project eu` and `--project us` write, and against what each project's own file holds.
// The reports and a verify of a set alone (in its directory) are spawned; the other verify runs, with
// --db and absolute paths, run the CLI in this process.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { manifestChainHead, manifestSchema } from "../../src/manifest/format.ts";
import { writeReports } from "../../src/report/writeReports.ts";
import { projectFilePath } from "../../src/storeLocation.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import {
  CSV_KINDS,
  expectCombinedCsvs,
  expectOverview,
  expectVerified,
  type ReportSet,
  reportOf,
} from "../helpers/projectReports.ts";
import { runCli } from "../helpers/runCli.ts";
import { tempDbPath, withDb } from "../helpers/simSync.ts";
import { PROJECT_NAMES, type ProjectName, syncBoth, useTwoProjects } from "../helpers/twoProjects.ts";
import { GENERATED_AT, SCENARIO, scenarioOnDisk } from "./scenario.ts";

const twoProjects = useTwoProjects();
let db: string;
let combined: ReportSet;
let alone: Record<ProjectName, ReportSet>;

beforeAll(async () => {
  db = tempDbPath("flagtrail-projects-report-");
  await syncBoth(await twoProjects(), db);
  const [all, eu, us] = await Promise.all([
    reportOf(db, ["--format", "csv,md,html"]),
    reportOf(db, ["--project", "eu"]),
    reportOf(db, ["--project", "us"]),
  ]);
  combined = all;
  alone = { eu, us };
});

/** Rows of a view in the project's own file within the report's period: what its CSV must hold. */
function viewRows(project: ProjectName, view: string, period: { start: number; end: number }): number {
  return withDb(projectFilePath(db, project), (d) =>
    d
      .prepare(`SELECT count(*) FROM ${view} WHERE occurred_at >= ? AND occurred_at < ?`)
      .pluck()
      .get(period.start, period.end),
  ) as number;
}

/**
 * The project's section of a combined Markdown as derived from its report alone: title → `## Project
 * <name>`, every heading a level down, links to the index-th repeat of a heading, the SQL hint naming
 * the project; the generation time (the two runs differ) blanked in both.
 */
function asSection(markdown: string, project: ProjectName, index: number): string {
  let fenced = false;
  return markdown
    .split("\n")
    .map((line, i) => {
      if (line.startsWith("```")) fenced = !fenced;
      if (i === 0) return `## Project ${project}`;
      return !fenced && /^#{1,5} /.test(line) ? `#${line}` : line;
    })
    .join("\n")
    .replace(/\]\(#([a-z0-9_-]+)\)/g, (_, slug: string) => `](#${slug}${index > 0 ? `-${index}` : ""})`)
    .replace(
      "`flagtrail sql --db <store> --param",
      `\`flagtrail sql --db <store> --project ${project} --param`,
    );
}

const blankGeneratedAt = (md: string) =>
  md.replace(/^\| Generated at \| [^|]* \|$/gm, "| Generated at | - |");

describe("flagtrail report on a store holding two projects (SQLite)", () => {
  it("writes CSVs of eu's rows then us's with a project column, each project's rows those of its own file", () => {
    expectCombinedCsvs(combined, alone);
    for (const project of PROJECT_NAMES) {
      const { manifest } = alone[project];
      const rows = (kind: string) => manifest.files.find((f) => f.name.startsWith(`${kind}_`))!.rows;
      expect(rows("experiment-state-changes")).toBe(
        viewRows(project, "experiment_state_changes", manifest.period),
      );
      expect(rows("config-edits")).toBe(viewRows(project, "config_edits", manifest.period));
      expect(rows("config-edits")).toBeGreaterThan(0);
    }
  });

  it("writes one Markdown: which projects, each one's completeness, then each project's whole document", () => {
    const md = blankGeneratedAt(combined.read(`compliance_${combined.stem}.md`));
    expect(md.startsWith(`# Compliance report ${combined.stem.replace("_", " to ")}\n`)).toBe(true);
    expect(md).toContain("covers the 2 projects of the store: eu, us.");
    expectOverview(md, alone);
    const euStart = md.indexOf("\n## Project eu\n") + 1;
    const usStart = md.indexOf("\n## Project us\n") + 1;
    expect(0 < euStart && euStart < usStart).toBe(true);
    const own = (p: ProjectName) => blankGeneratedAt(alone[p].read(`compliance_${alone[p].stem}.md`));
    expect(md.slice(euStart, usStart)).toBe(asSection(own("eu"), "eu", 0));
    expect(md.slice(usStart)).toBe(asSection(own("us"), "us", 1));
    // The HTML: the repeated headings' ids as the second project's links name them.
    const html = combined.read(`compliance_${combined.stem}.html`);
    expect(html).toContain('<h3 id="completeness-1">Completeness</h3>');
    expect(html).toContain('href="#completeness-1"');
    expect(html).toContain('<h2 id="project-us">Project us</h2>');
  });

  it("verify --db checks each project's chain head from a combined manifest, and a one-project manifest's own", async () => {
    const path = join(combined.out, `manifest_${combined.stem}.json`);
    const both = await runCliInProcess(["verify", "--db", db, "--manifest", path]);
    expect(both.stderr).toBe("");
    expect(both.stdout).toMatch(/^Project eu: OK: .*\nProject us: OK: /);
    expect(both.code).toBe(0);

    // us's head in the manifest moved to another hash: us fails, eu still verifies.
    const body = JSON.parse(readFileSync(path, "utf8")) as {
      store: { projects: { project: string; chainHead: { seq: number; chainHash: string } }[] };
    };
    const us = body.store.projects.find((p) => p.project === "us")!;
    us.chainHead.chainHash = "0".repeat(64);
    const moved = join(combined.out, "moved-manifest.json");
    writeFileSync(moved, JSON.stringify(body));
    const wrong = await runCliInProcess(["verify", "--db", db, "--manifest", moved]);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(/^Project eu: OK: /);
    expect(wrong.stderr.trim()).toMatch(
      /^flagtrail: 1 of 2 projects failed: us \(the manifest's chain head \(seq \d+, 000000/,
    );

    // A one-project manifest names its project: compared with that project's chain only.
    const eu = join(alone.eu.out, `manifest_${alone.eu.stem}.json`);
    const own = await runCliInProcess(["verify", "--db", db, "--manifest", eu]);
    expect(own.stderr).toBe("");
    expect(own.code).toBe(0);
    const other = await runCliInProcess(["verify", "--db", db, "--manifest", eu, "--project", "us"]);
    expect(other.code).toBe(2);
    expect(other.stderr.trim()).toBe(
      "flagtrail: The manifest is a report of project eu, which is not among those verified.",
    );
  });

  it("writes a manifest of format 2 with each project's store state, which verify accepts", async () => {
    const { manifest } = combined;
    expect(manifest.format).toBe("flagtrail-report-manifest/2");
    expect(manifest.parameters).not.toHaveProperty("project");
    expect(manifest.store).toEqual({
      projects: PROJECT_NAMES.map((project) => ({ project, ...alone[project].manifest.store })),
    });
    for (const project of PROJECT_NAMES) {
      expect(alone[project].manifest.format).toBe("flagtrail-report-manifest/1");
      expect(alone[project].manifest.parameters.project).toBe(project);
      const head = withDb(projectFilePath(db, project), (d) =>
        d.prepare("SELECT seq, chain_hash AS chainHash FROM audit_logs ORDER BY seq DESC LIMIT 1").get(),
      );
      expect(alone[project].manifest.store.chainHead).toEqual(head);
    }
    await expectVerified(combined);
    // As read back by the manifest's schema: each project's chain head by its name.
    const read = manifestSchema.parse(JSON.parse(combined.read(`manifest_${combined.stem}.json`)));
    for (const project of PROJECT_NAMES) {
      expect(manifestChainHead(read, project)).toEqual(alone[project].manifest.store.chainHead);
      const own = manifestSchema.parse(alone[project].manifest);
      expect(manifestChainHead(own, undefined)).toEqual(alone[project].manifest.store.chainHead);
    }
    expect(manifestChainHead(read, "apac")).toBeUndefined();
    // A changed byte in a combined CSV is caught.
    const csv = join(combined.out, `${CSV_KINDS[1]}_${combined.stem}.csv`);
    writeFileSync(csv, readFileSync(csv, "utf8").replace("eu,", "us,"));
    const tampered = await runCli(
      ["verify", "--manifest", join(combined.out, `manifest_${combined.stem}.json`)],
      {
        cwd: combined.out,
      },
    );
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toMatch(/config-edits_.*differs from the manifest/);
  });

  it("refuses a project the store does not hold, naming those it holds", async () => {
    const result = await runCliInProcess([
      "report",
      "--db",
      db,
      "--from",
      "2024-01-01",
      "--to",
      "2024-01-02",
      "--project",
      "apac",
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/holds no project apac \(it holds eu, us\)/);
  });
});

describe("a store of one project", () => {
  it("reports the same bytes with --project default as without it", async () => {
    const { dir, dbPath } = scenarioOnDisk("flagtrail-one-project-", { ruleDiffs: true });
    const common = {
      dbPath,
      ...SCENARIO,
      generatedAt: GENERATED_AT,
      formats: ["csv", "md", "html"] as const,
    };
    await writeReports({ ...common, outDir: join(dir, "all") });
    await writeReports({ ...common, outDir: join(dir, "named"), project: "default" });
    const files = readdirSync(join(dir, "all")).sort();
    expect(files).toHaveLength(6);
    expect(readdirSync(join(dir, "named")).sort()).toEqual(files);
    for (const name of files)
      expect(readFileSync(join(dir, "named", name)), name).toEqual(readFileSync(join(dir, "all", name)));
  });
});
