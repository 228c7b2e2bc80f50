// A report over two projects of one store (test/helpers/twoProjects.ts) checked against the reports of
// each project alone, all through the real CLI: the combined CSVs must be eu's records then us's with
// the project in front, the Markdown each project's document a level down, the manifest each project's
// store state, and `flagtrail verify --manifest` must accept the set.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { runCli } from "./runCli.ts";
import { daysAgo } from "./simSync.ts";
import { PROJECT_NAMES, type ProjectName } from "./twoProjects.ts";

const SIGNING_KEY = "project-report-signing-key";
export const CSV_KINDS = ["experiment-state-changes", "config-edits", "unreviewed-changes"] as const;
const BOM = "\uFEFF";

export interface ReportSet {
  out: string;
  stem: string;
  manifest: {
    format: string;
    parameters: Record<string, unknown>;
    period: { start: number; end: number };
    files: { name: string; rows: number; columns?: string[] }[];
    store: Record<string, unknown>;
  };
  read(name: string): string;
}

/** A period holding every record of the simulators' 40-day histories. */
export const PERIOD = { from: daysAgo(45), to: daysAgo(0) };

/** `flagtrail report` on `db` (signed), with `extra` arguments; fails the test unless it exits 0. */
export async function reportOf(db: string, extra: readonly string[] = []): Promise<ReportSet> {
  const out = mkdtempSync(join(tmpdir(), "flagtrail-projects-report-"));
  const result = await runCli(
    ["report", "--db", db, "--from", PERIOD.from, "--to", PERIOD.to, "--out", out, ...extra],
    { env: { FLAGTRAIL_SIGNING_KEY: SIGNING_KEY } },
  );
  // The stores were synced without the key: report says their chain heads are unsigned, nothing else.
  expect(result.stderr.replace(/^Note: the store's chain head is not signed .*\n/, "")).toBe("");
  expect(result.code).toBe(0);
  const stem = `${PERIOD.from}_${PERIOD.to}`;
  const read = (name: string) => readFileSync(join(out, name), "utf8");
  return { out, stem, manifest: JSON.parse(read(`manifest_${stem}.json`)), read };
}

/** A CSV's records (quoted CR LF kept inside its field), the header first, without the BOM. */
export function csvRecords(text: string): string[] {
  expect(text.startsWith(BOM)).toBe(true);
  const body = text.slice(BOM.length);
  const records: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '"') quoted = !quoted;
    else if (!quoted && body[i] === "\r" && body[i + 1] === "\n") {
      records.push(body.slice(start, i));
      start = i + 2;
      i += 1;
    }
  }
  expect(body.slice(start)).toBe("");
  return records;
}

/** `flagtrail verify --manifest` on a report set alone (no store in its directory): exit 0, signature valid. */
export async function expectVerified(set: ReportSet): Promise<void> {
  const result = await runCli(["verify", "--manifest", join(set.out, `manifest_${set.stem}.json`)], {
    cwd: set.out,
    env: { FLAGTRAIL_SIGNING_KEY: SIGNING_KEY },
  });
  expect(result.stderr).toBe("");
  expect(result.stdout).toMatch(/report files match the manifest, signature valid/);
  expect(result.code).toBe(0);
}

/** Each combined CSV is the header once with `project` first, then eu's records, then us's, prefixed. */
export function expectCombinedCsvs(combined: ReportSet, alone: Record<ProjectName, ReportSet>): void {
  for (const kind of CSV_KINDS) {
    const name = `${kind}_${combined.stem}.csv`;
    const [header, ...rows] = csvRecords(combined.read(name));
    const expected: string[] = [];
    let aloneHeader = "";
    for (const project of PROJECT_NAMES) {
      const [ownHeader, ...own] = csvRecords(alone[project].read(name));
      aloneHeader = ownHeader!;
      expected.push(...own.map((record) => `${project},${record}`));
      const listed = alone[project].manifest.files.find((f) => f.name === name)!;
      expect(own).toHaveLength(listed.rows);
    }
    expect(header).toBe(`project,${aloneHeader}`);
    expect(rows).toEqual(expected);
    const listed = combined.manifest.files.find((f) => f.name === name)!;
    expect(listed.rows).toBe(expected.length);
    expect(listed.columns?.[0]).toBe("project");
  }
}

/** The project's Markdown line of the overview table: its completeness statement. */
export function overviewLine(markdown: string, project: ProjectName): string | undefined {
  return markdown.split("\n").find((line) => line.startsWith(`| [${project}](#project-${project}) |`));
}

/** The verdict of a single-project report's summary (`| Completeness | <verdict> [Details](…) |`). */
export function summaryVerdict(markdown: string): string {
  const line = markdown.split("\n").find((l) => l.startsWith("| Completeness | "))!;
  return line.slice("| Completeness | ".length, line.indexOf(" [Details]("));
}

/** Both projects' lines in the overview, each with the record count and verdict of the project alone. */
export function expectOverview(combined: string, alone: Record<ProjectName, ReportSet>): void {
  for (const project of PROJECT_NAMES) {
    const own = alone[project];
    const md = own.read(`compliance_${own.stem}.md`);
    const records = own.manifest.files.find((f) => f.name.startsWith("compliance_"))!.rows;
    const line = overviewLine(combined, project);
    expect(line, `overview line of ${project}`).toBeDefined();
    expect(line).toContain(`| [${project}](#project-${project}) | ${records} | `);
    expect(line!.endsWith(`| ${summaryVerdict(md)} |`)).toBe(true);
    expect(combined).toContain(`\n## Project ${project}\n`);
  }
}
