// A projects config (flagtrail.config.json) through the real CLI: the key comes from the environment
// variable the config names, the project is named in the store, and another project's sync into the same
// store is refused rather than mixed in (one store holds one project until stores are per project).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, storedIds, tempDbPath, useTestSimulator, withDb } from "../helpers/simSync.ts";

const startSim = useTestSimulator();

function writeConfig(projects: Record<string, unknown>): string {
  const path = join(mkdtempSync(join(tmpdir(), "flagtrail-config-")), "flagtrail.config.json");
  writeFileSync(path, JSON.stringify({ projects }));
  return path;
}

const TEST_ENV = {
  FLAGTRAIL_RATE_LIMITS: "100000/1000",
  FLAGTRAIL_RETRY_BASE_MS: "5",
  FLAGTRAIL_RETRY_MAX_DELAY_MS: "200",
};

describe("sync with a projects config", () => {
  it("syncs the chosen project with the key its variable holds, and refuses a second project in that store", async () => {
    const sim = await startSim({ records: 300, days: 60 });
    const db = tempDbPath();
    const entry = { apiKeyEnv: "WEB_KEY", baseUrl: sim.url, authHeader: sim.settings.authHeader };
    const config = writeConfig({ web: entry, mobile: { ...entry, apiKeyEnv: "MOBILE_KEY" } });
    const env = { ...TEST_ENV, WEB_KEY: sim.settings.apiKey, MOBILE_KEY: sim.settings.apiKey };
    const args = ["sync", "--config", config, "--db", db, "--since", daysAgo(65), "--no-entities", "--quiet"];

    const both = await runCli(args, { env });
    expect(both.code).toBe(2);
    expect(both.stderr.trim()).toBe(
      "flagtrail: The config lists 2 projects (web, mobile); a store holds one project for now: pass --project NAME, with a --db for each.",
    );

    const web = await runCli([...args, "--project", "web"], { env });
    expect(web.stderr).toBe("");
    expect(web.code).toBe(0);
    expect(storedIds(db)).toHaveLength(300);
    expect(withDb(db, (d) => d.prepare("SELECT value FROM meta WHERE key = 'project'").pluck().get())).toBe(
      "web",
    );

    const mobile = await runCli([...args, "--project", "mobile"], { env });
    expect(mobile.code).toBe(1);
    expect(mobile.stderr.trim()).toBe(
      `flagtrail: ${db} holds the audit history of project web; project mobile needs a store of its own (one store holds one project for now).`,
    );
    expect(withDb(db, (d) => d.prepare("SELECT count(*) FROM sync_runs").pluck().get())).toBe(1);

    const unknown = await runCli([...args, "--project", "ios"], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe("flagtrail: No project named ios (known: web, mobile).");
  });

  it("refuses a key written in the config and names a variable that is not set, never printing a key", async () => {
    const sim = await startSim({ records: 50, days: 30 });
    const db = tempDbPath();
    const clear = writeConfig({ web: { apiKey: sim.settings.apiKey, baseUrl: sim.url } });
    const refused = await runCli(["sync", "--config", clear, "--db", db], { env: TEST_ENV });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("projects.web.apiKey holds an API key in clear text");
    expect(refused.stderr).not.toContain(sim.settings.apiKey);

    const unset = writeConfig({ web: { apiKeyEnv: "WEB_KEY", baseUrl: sim.url } });
    const missing = await runCli(["sync", "--config", unset, "--db", db], { env: TEST_ENV });
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(
      "flagtrail: Project web: the environment variable WEB_KEY is not set.",
    );
  });

  it("a store synced before projects existed holds the project default", async () => {
    const sim = await startSim({ records: 80, days: 30 });
    const db = tempDbPath();
    const flagsEnv = {
      ...TEST_ENV,
      FLAGTRAIL_BASE_URL: sim.url,
      FLAGTRAIL_API_KEY: sim.settings.apiKey,
      FLAGTRAIL_AUTH_HEADER: sim.settings.authHeader,
    };
    const first = await runCli(["sync", "--db", db, "--since", daysAgo(35), "--no-entities", "--quiet"], {
      env: flagsEnv,
    });
    expect(first.code, first.stderr).toBe(0);
    expect(withDb(db, (d) => d.prepare("SELECT value FROM meta WHERE key = 'project'").pluck().get())).toBe(
      "default",
    );
    // As a store of an older flagtrail would be: records, no project named.
    const writable = new Database(db);
    writable.prepare("DELETE FROM meta WHERE key = 'project'").run();
    writable.close();
    const config = writeConfig({
      web: { apiKeyEnv: "WEB_KEY", baseUrl: sim.url, authHeader: sim.settings.authHeader },
    });
    const other = await runCli(["sync", "--config", config, "--db", db, "--no-entities"], {
      env: { ...TEST_ENV, WEB_KEY: sim.settings.apiKey },
    });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("holds the audit history of project default; project web needs a store");
  });
});
