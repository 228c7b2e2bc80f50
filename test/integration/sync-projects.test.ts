// Several projects in one SQLite store through the real CLI: two simulators (different histories,
// overlapping record ids) listed in a projects config. Each project's history lands in its own part of
// the store, equal to its simulator's; one project's refused key leaves the other synced and the exit
// code names it; a store synced before projects existed keeps its history as project default. The first
// sync of both projects is spawned (end to end); the other runs of the CLI are in this process.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { projectFilePath } from "../../src/storeLocation.ts";
import { logEvents, waitUntil } from "../helpers/daemonProcess.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { compareWithSimulator, daysAgo, storedIds, tempDbPath, withDb } from "../helpers/simSync.ts";
import { syncBoth, useTwoProjects, writeProjectsConfig } from "../helpers/twoProjects.ts";

const twoProjects = useTwoProjects();

/** The store's records equal the simulator's: same ids, and each id's record is this simulator's. */
function expectSameHistory(sim: RunningSimulator, path: string): void {
  const compared = compareWithSimulator(sim, path);
  expect(compared.storeCount).toBe(compared.simulatorCount);
  expect(compared.distinct).toBe(compared.storeCount);
  expect(compared.unknownToSimulator).toEqual([]);
  const rows = withDb(path, (db) => db.prepare("SELECT id, name, action_type FROM audit_logs").all()) as {
    id: string;
    name: string;
    action_type: string;
  }[];
  for (const row of rows) {
    const record = sim.control.get(row.id);
    expect({ name: row.name, actionType: row.action_type }).toEqual({
      name: record?.name,
      actionType: record?.actionType,
    });
  }
}

function metaValue(path: string, key: string): unknown {
  return withDb(path, (d) => d.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(key));
}

describe("sync of several projects into one store", () => {
  it("syncs every configured project into its own part of the store, ids overlapping", async () => {
    const projects = await twoProjects();
    const db = tempDbPath();
    const result = await syncBoth(projects, db, runCli);
    expect(result.stdout).toMatch(/^Project eu\nSynced /);
    expect(result.stdout).toMatch(/\nProject us\nSynced /);

    const eu = projectFilePath(db, "eu");
    const us = projectFilePath(db, "us");
    expectSameHistory(projects.sims.eu, eu);
    expectSameHistory(projects.sims.us, us);
    const shared = storedIds(eu).filter((id) => new Set(storedIds(us)).has(id));
    expect(shared.length).toBeGreaterThan(0);
    // The store's own file registers both and holds no records of either.
    expect(storedIds(db)).toEqual([]);
    expect(metaValue(db, "project:eu")).toBe(eu);
    expect(metaValue(eu, "project")).toBe("eu");
    expect(metaValue(us, "project")).toBe("us");
    // Each project's chain starts at its own genesis: seq 1 .. n in each part.
    for (const path of [eu, us]) {
      const seqs = withDb(path, (d) => d.prepare("SELECT seq FROM audit_logs ORDER BY seq").pluck().all());
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }

    // A second sync fetches nothing new and adds nothing; each project asked its own server.
    const requests = (sim: RunningSimulator) =>
      Object.values(sim.control.counters().requests).reduce((sum, n) => sum + n, 0);
    const before = [projects.sims.eu, projects.sims.us].map(requests);
    const again = await syncBoth(projects, db);
    expect(again.stdout.match(/new 0,/g)).toHaveLength(2);
    const after = [projects.sims.eu, projects.sims.us].map(requests);
    expect(after[0]).toBeGreaterThan(before[0] ?? 0);
    expect(after[1]).toBeGreaterThan(before[1] ?? 0);
    expect(storedIds(eu)).toHaveLength(projects.sims.eu.control.size());
  });

  it("one project's refused key leaves the other synced; the exit code and the message name it", async () => {
    const projects = await twoProjects();
    const db = tempDbPath();
    const env = { ...projects.env, US_KEY: "not-the-us-key" };
    const result = await runCliInProcess([...projects.syncArgs(db), "--json"], { env });
    expect(result.code).toBe(1);
    const last = result.stderr.trim().split("\n").at(-1);
    expect(last).toBe(
      "flagtrail: 1 of 2 projects failed: us (The API key was rejected: it is not an active console key).",
    );
    expect(result.stderr).not.toContain("not-the-us-key");
    const summary = JSON.parse(result.stdout) as { projects: { project: string; error?: string }[] };
    expect(summary.projects.map((p) => [p.project, p.error === undefined])).toEqual([
      ["eu", true],
      ["us", false],
    ]);
    expectSameHistory(projects.sims.eu, projectFilePath(db, "eu"));
    expect(storedIds(projectFilePath(db, "us"))).toEqual([]);

    // With the right key, the next run completes us without re-reading eu's history.
    const fixed = await runCliInProcess(projects.syncArgs(db), { env: projects.env });
    expect(fixed.code, fixed.stderr).toBe(0);
    expectSameHistory(projects.sims.us, projectFilePath(db, "us"));
  });

  it("runs the projects at once: a slow project does not hold a fast one back", async () => {
    const projects = await twoProjects();
    const db = tempDbPath();
    // Every eu request waits 1.5 s at the server; us answers at once.
    projects.sims.eu.control.setFaults({ latencyMs: 1500 });
    const running = runCliInProcess([...projects.syncArgs(db), "--concurrency", "2"], { env: projects.env });
    const eu = projectFilePath(db, "eu");
    const us = projectFilePath(db, "us");
    const count = (path: string) => (existsSync(path) ? storedIds(path).length : 0);
    await waitUntil(() => count(us) === projects.sims.us.control.size(), "us to be synced");
    // us is complete while eu, listed first, is still waiting on its server.
    expect(count(eu)).toBeLessThan(projects.sims.eu.control.size());
    // Shown: the rest of eu need not wait any longer.
    projects.sims.eu.control.setFaults({});
    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    expectSameHistory(projects.sims.eu, eu);
  });

  it("--project syncs one project; an unknown one is a usage error", async () => {
    const projects = await twoProjects();
    const db = tempDbPath();
    const one = await runCliInProcess([...projects.syncArgs(db), "--project", "us"], { env: projects.env });
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^Synced /);
    expectSameHistory(projects.sims.us, projectFilePath(db, "us"));
    expect(existsSync(projectFilePath(db, "eu"))).toBe(false);
    expect(projects.sims.eu.control.counters().requests).toEqual({});

    const unknown = await runCliInProcess([...projects.syncArgs(db), "--project", "ios"], {
      env: projects.env,
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe("flagtrail: No project named ios (known: eu, us).");
  });

  it("refuses a key written in the config and names a variable that is not set, never printing a key", async () => {
    const projects = await twoProjects();
    const db = tempDbPath();
    const key = projects.sims.eu.settings.apiKey;
    const clear = writeProjectsConfig({ web: { apiKey: key, baseUrl: projects.sims.eu.url } });
    const refused = await runCliInProcess(["sync", "--config", clear, "--db", db], { env: projects.env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("projects.web.apiKey holds an API key in clear text");
    expect(refused.stderr).not.toContain(key);

    const unset = writeProjectsConfig({ web: { apiKeyEnv: "WEB_KEY", baseUrl: projects.sims.eu.url } });
    const missing = await runCliInProcess(["sync", "--config", unset, "--db", db], { env: projects.env });
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(
      "flagtrail: Project web: the environment variable WEB_KEY is not set.",
    );
  });

  it("a store synced before projects existed keeps its history as project default beside a new project", async () => {
    const projects = await twoProjects();
    const db = tempDbPath();
    const eu = projects.sims.eu;
    const flagsEnv = {
      ...projects.env,
      FLAGTRAIL_BASE_URL: eu.url,
      FLAGTRAIL_API_KEY: eu.settings.apiKey,
      FLAGTRAIL_AUTH_HEADER: eu.settings.authHeader,
    };
    const first = await runCliInProcess(
      ["sync", "--db", db, "--since", daysAgo(45), "--no-entities", "--quiet"],
      {
        env: flagsEnv,
      },
    );
    expect(first.code, first.stderr).toBe(0);
    // As an older flagtrail leaves it: records, no project named.
    const writable = new Database(db);
    writable.prepare("DELETE FROM meta WHERE key = 'project'").run();
    writable.close();
    const idsBefore = storedIds(db);

    const us = await runCliInProcess([...projects.syncArgs(db), "--project", "us"], { env: projects.env });
    expect(us.code, us.stderr).toBe(0);
    expect(storedIds(db)).toEqual(idsBefore);
    expectSameHistory(eu, db);
    expectSameHistory(projects.sims.us, projectFilePath(db, "us"));

    // The flags' project is still default, in the store's own file.
    const again = await runCliInProcess(["sync", "--db", db, "--no-entities", "--quiet"], { env: flagsEnv });
    expect(again.code, again.stderr).toBe(0);
    expect(storedIds(db)).toEqual(idsBefore);
  });
});

describe("daemon serving several projects", () => {
  it("--once runs a cycle of every project, each line naming its project, each report in its folder", async () => {
    const projects = await twoProjects();
    const db = tempDbPath();
    const out = join(dirname(db), "reports");
    const args = ["daemon", "--once", "--config", projects.config, "--db", db, "--since", daysAgo(45)];
    const result = await runCliInProcess(
      [...args, "--no-entities", "--report", "monthly", "--out", out, "--json"],
      {
        env: projects.env,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expectSameHistory(projects.sims.eu, projectFilePath(db, "eu"));
    expectSameHistory(projects.sims.us, projectFilePath(db, "us"));
    const ends = logEvents(result.stderr).filter((e) => e.event === "cycle.end");
    expect(ends.map((e) => e.project).sort()).toEqual(["eu", "us"]);
    for (const end of ends) {
      const report = end.report as { manifest: string };
      expect(dirname(report.manifest)).toBe(join(out, String(end.project)));
      const manifest = JSON.parse(readFileSync(report.manifest, "utf8")) as {
        parameters: { project?: string };
      };
      expect(manifest.parameters.project).toBe(end.project);
    }
    expect(result.stderr).not.toContain(projects.sims.eu.settings.apiKey);
    expect(result.stderr).not.toContain(projects.sims.us.settings.apiKey);
  });
});
