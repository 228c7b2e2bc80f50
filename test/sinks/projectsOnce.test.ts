// `export --sink` goes over every project of the store. A receiver refusing one project's events (an
// event it cannot take: HTTP 400, or one too large alone) stopped the run there: the projects after it
// were never sent, on every run, for as long as that event stays (review h62). The daemon, one worker per
// project, holds no project back; a cron `export --sink` must not either. Two simulators synced into one
// store; a real HTTP receiver on 127.0.0.1 that refuses every batch holding an event of project eu.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectFilePath } from "../../src/storeLocation.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { tempDbPath } from "../helpers/simSync.ts";
import { syncBoth, useTwoProjects } from "../helpers/twoProjects.ts";
import { type Intake, startIntake } from "./receivers.ts";

const twoProjects = useTwoProjects(90);

describe("export --sink over two projects, one refused", () => {
  let intake: Intake;
  /** Event ids of the batches the receiver took (2xx). */
  const taken: string[] = [];

  beforeAll(async () => {
    intake = await startIntake(({ text }) => {
      const events = text
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { unmapped: { project: string; event_id: string } });
      if (events.some((e) => e.unmapped.project === "eu")) return 400;
      taken.push(...events.map((e) => e.unmapped.event_id));
      return 200;
    });
  });

  afterAll(() => intake?.close());

  it("delivers the other project, and fails naming the sink", async () => {
    const projects = await twoProjects();
    const db = tempDbPath();
    await syncBoth(projects, db);
    const url = `${intake.url}/in`;
    const config = join(dirname(db), "sinks.json");
    writeFileSync(config, JSON.stringify({ sinks: [{ name: "siem", kind: "http", url, retries: 0 }] }));
    const run = await runCliInProcess(["export", "--sink", "siem", "--db", db, "--config", config]);
    expect(run.stderr).toMatch(/^flagtrail: sink "siem" did not take the events \(HTTP 400\)/);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.code).toBe(1);
    const usIds = new Database(projectFilePath(db, "us"), { readonly: true });
    try {
      const ids = usIds.prepare("SELECT id FROM audit_logs ORDER BY seq").pluck().all() as string[];
      expect(ids.length).toBeGreaterThan(0);
      expect(taken).toEqual(ids.map((id) => `us:${id}`));
    } finally {
      usIds.close();
    }
  });
});
