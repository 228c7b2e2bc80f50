// Several projects in one PostgreSQL store through the real CLI: two simulators (different histories,
// overlapping record ids) synced into one database, each project in its own schema beside the URL's;
// one project's refused key; daemons of two projects on one database at once (leases per project); a
// single-project store from before projects keeping its history as project default. The refused key's
// sync and the daemon holding a lease are spawned (end to end); the other runs are in this process.
import { describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { logEvents, spawnDaemon, waitUntil } from "../helpers/daemonProcess.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo } from "../helpers/simSync.ts";
import { syncBoth, useTwoProjects } from "../helpers/twoProjects.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const twoProjects = useTwoProjects(180);

interface Row {
  id: string;
  name: string;
  action_type: string;
  seq: number;
}

async function rowsIn(url: string, schema: string): Promise<Row[]> {
  return queryOnce<Row>(
    url,
    `SELECT id, name, action_type, seq::int AS seq FROM "${schema}".audit_logs ORDER BY seq`,
  );
}

/** The schema's records are the simulator's, and its chain numbers them from 1. */
async function expectSameHistory(sim: RunningSimulator, url: string, schema: string): Promise<Set<string>> {
  const rows = await rowsIn(url, schema);
  expect(rows).toHaveLength(sim.control.size());
  expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
  for (const row of rows) {
    const record = sim.control.get(row.id);
    expect({ name: row.name, actionType: row.action_type }).toEqual({
      name: record?.name,
      actionType: record?.actionType,
    });
  }
  return new Set(rows.map((r) => r.id));
}

describe("several projects in one PostgreSQL store", () => {
  it("each project in its own schema, equal to its simulator; one refused key fails that project alone", async () => {
    const projects = await twoProjects();
    const url = await freshDatabase("projects");
    const env = { ...projects.env, US_KEY: "not-the-us-key" };
    const refused = await runCli(projects.syncArgs(url), { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split("\n").at(-1)).toBe(
      "flagtrail: 1 of 2 projects failed: us (The API key was rejected: it is not an active console key).",
    );
    expect(refused.stderr).not.toContain(new URL(url).password);
    await expectSameHistory(projects.sims.eu, url, "public_eu");
    expect(await rowsIn(url, "public_us")).toEqual([]);

    await syncBoth(projects, url);
    const eu = await expectSameHistory(projects.sims.eu, url, "public_eu");
    const us = await expectSameHistory(projects.sims.us, url, "public_us");
    expect([...us].filter((id) => eu.has(id)).length).toBeGreaterThan(0);
    expect(await queryOnce(url, "SELECT count(*)::int AS n FROM public.audit_logs")).toEqual([{ n: 0 }]);
    const registered = await queryOnce<{ key: string }>(
      url,
      "SELECT key FROM public.meta WHERE key LIKE 'project:%' ORDER BY key",
    );
    expect(registered.map((r) => r.key)).toEqual(["project:eu", "project:us"]);
  });

  it("a daemon holding one project's lease does not stop another project's daemon on the same database", async () => {
    const projects = await twoProjects();
    const url = await freshDatabase("projects");
    const args = ["--config", projects.config, "--db", url, "--since", daysAgo(45), "--no-entities"];
    const holder = spawnDaemon([...args, "--project", "eu", "--cron", "0 3 1 1 *"], projects.env);
    await waitUntil(
      () => logEvents(holder.stderrSoFar()).some((e) => e.event === "lease.acquired"),
      "the eu daemon to take its lease",
    );
    const us = await runCliInProcess(["daemon", ...args, "--project", "us", "--once"], { env: projects.env });
    expect(us.code, us.stderr).toBe(0);
    await expectSameHistory(projects.sims.us, url, "public_us");

    const eu = await runCliInProcess(["daemon", ...args, "--project", "eu", "--once"], { env: projects.env });
    expect(eu.code).toBe(1);
    expect(eu.stderr).toContain("Another daemon is running on this database");
    holder.child().kill("SIGTERM");
    expect((await holder.done).code).toBe(0);
  });

  it("a store synced before projects existed keeps its history as project default", async () => {
    const projects = await twoProjects();
    const url = await freshDatabase("projects");
    const eu = projects.sims.eu;
    const first = await runCliInProcess(
      ["sync", "--db", url, "--since", daysAgo(45), "--no-entities", "--quiet"],
      {
        env: {
          ...projects.env,
          FLAGTRAIL_BASE_URL: eu.url,
          FLAGTRAIL_API_KEY: eu.settings.apiKey,
          FLAGTRAIL_AUTH_HEADER: eu.settings.authHeader,
        },
      },
    );
    expect(first.code, first.stderr).toBe(0);
    await queryOnce(url, "DELETE FROM meta WHERE key = 'project'");
    const before = await rowsIn(url, "public");

    const us = await runCliInProcess([...projects.syncArgs(url), "--project", "us"], { env: projects.env });
    expect(us.code, us.stderr).toBe(0);
    expect(await rowsIn(url, "public")).toEqual(before);
    await expectSameHistory(eu, url, "public");
    await expectSameHistory(projects.sims.us, url, "public_us");
  });
});
