// status, sql and verify on a PostgreSQL store holding two projects (issue 12), through the real CLI:
// two simulators with overlapping record ids synced into one database, each project in a schema of its own.
// The first status is spawned (end to end); the other runs of the CLI are in this process.
import { beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { syncBoth, type TwoProjects, useTwoProjects } from "../helpers/twoProjects.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const twoProjects = useTwoProjects();
let projects: TwoProjects;
let url: string;
let euSize: number;
let usSize: number;

beforeAll(async () => {
  projects = await twoProjects();
  url = await freshDatabase("reads");
  await syncBoth(projects, url);
  [euSize, usSize] = [projects.sims.eu.control.size(), projects.sims.us.control.size()];
});

describe("read commands on a PostgreSQL store of two projects", () => {
  it("status and verify cover each project's schema under its name", async () => {
    const [status, verify] = await Promise.all([
      runCli(["status", "--db", url, "--json"]),
      runCliInProcess(["verify", "--db", url]),
    ]);
    expect(status.stderr).toBe("");
    const { projects } = JSON.parse(status.stdout) as {
      projects: { project: string; database: string; records: { total: number } }[];
    };
    expect(projects.map((p) => [p.project, p.records.total])).toEqual([
      ["eu", euSize],
      ["us", usSize],
    ]);
    expect(projects[1]?.database).toMatch(/schema public_us/);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^Project eu: OK: hash chain of \d+ records intact.*\nProject us: OK: /);
  });

  it("sql runs in each project's schema, project first; --project in one; a write is refused in all", async () => {
    const count = "SELECT count(*)::int AS n FROM audit_logs";
    const shared = `SELECT count(*)::int AS n FROM audit_logs WHERE id IN (SELECT id FROM public_us.audit_logs)`;
    const [all, us, overlap, write] = await Promise.all([
      runCliInProcess(["sql", count, "--db", url, "--csv"]),
      runCliInProcess(["sql", count, "--db", url, "--project", "us", "--csv"]),
      runCliInProcess(["sql", shared, "--db", url, "--project", "eu", "--json"]),
      runCliInProcess(["sql", "DELETE FROM audit_logs", "--db", url]),
    ]);
    expect(all.stderr).toBe("");
    expect(all.stdout).toBe(`project,n\r\neu,${euSize}\r\nus,${usSize}\r\n`);
    expect(us.stdout).toBe(`n\r\n${usSize}\r\n`);
    // The two projects' record ids overlap, each in its own schema's table.
    expect(JSON.parse(overlap.stdout)[0].n).toBeGreaterThan(0);
    expect(write.code).toBe(2);
    expect(write.stdout).toBe("");
    const [row] = await queryOnce<{ n: number }>(url, "SELECT count(*)::int AS n FROM public_us.audit_logs");
    expect(row?.n).toBe(usSize);
  });

  it("a registered project whose schema is gone is named as missing, by reads and by sync (which makes no new one)", async () => {
    await queryOnce(url, "ALTER SCHEMA public_us RENAME TO public_us_moved");
    try {
      const [status, eu, sync] = await Promise.all([
        runCliInProcess(["status", "--db", url]),
        runCliInProcess(["status", "--db", url, "--project", "eu", "--json"]),
        runCliInProcess([...projects.syncArgs(url), "--project", "us"], { env: projects.env }),
      ]);
      expect(sync.code).toBe(1);
      expect(sync.stderr).toMatch(
        /^flagtrail: Project us is registered in postgres:\/\/\S+, but its schema public_us is missing/,
      );
      const schemas = await queryOnce<{ name: string }>(
        url,
        "SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'public_us%' ORDER BY 1",
      );
      expect(schemas.map((row) => row.name)).toEqual(["public_us_moved"]);
      expect(status.code).toBe(1);
      expect(status.stderr).toMatch(
        /^flagtrail: Project us is registered in postgres:\/\/\S+, but its schema public_us is missing \(moved or deleted\); restore it from the backup taken with the store\.\n$/,
      );
      expect(eu.code).toBe(0);
      expect(JSON.parse(eu.stdout).records.total).toBe(euSize);
    } finally {
      await queryOnce(url, "ALTER SCHEMA public_us_moved RENAME TO public_us");
    }
  });
});
