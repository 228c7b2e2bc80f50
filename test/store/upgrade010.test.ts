// A store written by flagtrail 0.1.0 (test/fixtures/flagtrail-0.1.0.db.gz, made by that version's own CLI)
// opens with today's code, upgrades on its first writable open (a sync), and loses nothing: every record,
// revision, quarantined item, coverage day, rule change and the checkpoint are there afterwards, byte for
// byte, the hash chain verifies across the old and the new records, and the read commands work on it.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { projectFilePath } from "../../src/storeLocation.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { simEnv, startTestSimulator, storedIds, withDb } from "../helpers/simSync.ts";
import { writeProjectsConfig } from "../helpers/twoProjects.ts";

const FIXTURE = new URL("../fixtures/flagtrail-0.1.0.db.gz", import.meta.url);

/** Rows of `query`, as the store holds them (the columns 0.1.0 had, so that both sides compare). */
const rowsOf = (db: Database.Database, query: string) => db.prepare(query).all() as Record<string, unknown>[];

const RECORD_COLUMNS = `id, name, action_type, change_log, updated_by, updated_by_user_id, modifier_email,
  occurred_at, server_day, date_text, time_text, tags, raw, record_hash, seq, chain_hash, first_seen_at, sync_run_id`;

function snapshot(path: string) {
  return withDb(path, (db) => ({
    records: rowsOf(db, `SELECT ${RECORD_COLUMNS} FROM audit_logs ORDER BY seq`),
    changes: rowsOf(db, "SELECT id, changes FROM audit_logs ORDER BY seq").map((r) => ({
      id: r.id,
      changes: JSON.parse(String(r.changes)) as unknown,
    })),
    revisions: rowsOf(
      db,
      "SELECT audit_log_id, raw, record_hash, seen_at FROM audit_log_revisions ORDER BY id",
    ),
    quarantine: rowsOf(
      db,
      "SELECT record_id, raw, raw_hash, issues, request_path, received_at FROM quarantine ORDER BY id",
    ),
    coverage: rowsOf(
      db,
      "SELECT filter_key, day, server_total, local_count, day_closed FROM coverage ORDER BY filter_key, day",
    ),
    ruleChanges: rowsOf(
      db,
      "SELECT audit_log_id, rule_id, rule_name, change, field, old_value, new_value, old_position, new_position FROM rule_changes ORDER BY id",
    ),
    checkpoints: rowsOf(db, "SELECT filter_key, latest_id, latest_occurred_at FROM checkpoints"),
    runs: rowsOf(
      db,
      "SELECT id, started_at, outcome, fetched, inserted FROM sync_runs WHERE id <= 2 ORDER BY id",
    ),
  }));
}

describe("a store written by flagtrail 0.1.0", () => {
  let sim: RunningSimulator;
  let path: string;
  let before: ReturnType<typeof snapshot>;

  beforeAll(async () => {
    path = join(mkdtempSync(join(tmpdir(), "flagtrail-upgrade-")), "flagtrail.db");
    writeFileSync(path, gunzipSync(readFileSync(FIXTURE)), { mode: 0o600 });
    before = snapshot(path);
    // Today's simulator serves another history around the fixture's checkpoint: the sync adds records.
    sim = await startTestSimulator({
      seed: 11,
      records: 200,
      days: 100,
      now: Date.parse("2026-11-21T12:00:00Z"),
    });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it("holds what the fixture's README says (the test reads a real 0.1.0 store)", () => {
    expect(before.records).toHaveLength(697);
    expect(before.quarantine).toHaveLength(3);
    expect(before.revisions).toHaveLength(2);
    expect(before.ruleChanges.length).toBeGreaterThan(300);
    expect(before.coverage).toHaveLength(128);
    expect(before.checkpoints).toHaveLength(1);
  });

  it("is refused by the read commands until upgraded, with the command that upgrades it", async () => {
    const status = await runCli(["status", "--db", path]);
    expect(status.code).toBe(1);
    expect(status.stderr.trim()).toBe(
      `flagtrail: ${path} was written by an older flagtrail; run \`flagtrail sync\` on it once to upgrade it.`,
    );
  });

  it("upgrades on its first sync and keeps every row it had, byte for byte", async () => {
    const sync = await runCli(["sync", "--no-entities", "--json", "--quiet"], { env: simEnv(sim, path) });
    expect(sync.stderr).toBe("");
    expect(sync.code).toBe(0);
    const after = snapshot(path);
    // The old records are the first links of the chain, unchanged; the sync appended after them.
    expect(after.records.slice(0, before.records.length)).toEqual(before.records);
    expect(after.records.length).toBeGreaterThan(before.records.length);
    // `changes` became a column generated from `raw`: the same JSON for every old record.
    expect(after.changes.slice(0, before.changes.length)).toEqual(before.changes);
    for (const key of ["revisions", "quarantine", "ruleChanges", "runs"] as const) {
      expect(after[key].slice(0, before[key].length), key).toEqual(before[key]);
    }
    // Every coverage day of the old history stays, and no local count drops. Server totals (and the
    // local counts of days repaired) may move: a nightly count reaches back over the checked history,
    // and this simulator serves another history than the one the fixture was synced from.
    const afterDays = new Map(after.coverage.map((r) => [`${r.filter_key}|${r.day}`, r]));
    for (const row of before.coverage) {
      const now = afterDays.get(`${row.filter_key}|${row.day}`);
      expect(now, String(row.day)).toBeDefined();
      expect(Number(now?.local_count)).toBeGreaterThanOrEqual(Number(row.local_count));
    }
  });

  it("verifies across old and new records, and the read commands work on it", async () => {
    const verify = await runCliInProcess(["verify", "--db", path]);
    expect(verify.stderr).toBe("");
    expect(verify.code).toBe(0);
    const status = await runCliInProcess(["status", "--db", path, "--json"]);
    expect(status.code).toBe(0);
    const parsed = JSON.parse(status.stdout) as {
      records: { total: number };
      quarantined: { total: number };
    };
    expect(parsed.records.total).toBe(snapshot(path).records.length);
    const out = mkdtempSync(join(tmpdir(), "flagtrail-upgrade-report-"));
    const report = await runCliInProcess([
      "report",
      "--db",
      path,
      "--from",
      "2026-10-01",
      "--to",
      "2026-10-31",
      "--out",
      out,
    ]);
    expect(report.stderr).toBe("");
    expect(report.code).toBe(0);
    // The month's config edits in the report are the old store's own.
    const october = before.records.filter(
      (r) => String(r.server_day) >= "2026-10-01" && String(r.server_day) <= "2026-10-31",
    );
    const csv = readFileSync(join(out, "config-edits_2026-10-01_2026-10-31.csv"), "utf8");
    const editIds = october.filter((r) => String(r.action_type).includes("config")).map((r) => String(r.id));
    for (const id of editIds.slice(0, 20)) expect(csv).toContain(id);
  });

  it("takes a second project beside its history, which stays project default's, and reports both", async () => {
    const records = snapshot(path).records;
    const eu = await startTestSimulator({
      seed: 12,
      records: 120,
      days: 60,
      now: Date.parse("2026-11-21T12:00:00Z"),
      apiKey: "eu-console-key-0003",
    });
    try {
      const entry = { apiKeyEnv: "EU_KEY", baseUrl: eu.url, authHeader: eu.settings.authHeader };
      const config = writeProjectsConfig({ eu: entry });
      const env = { ...simEnv(eu, path), EU_KEY: eu.settings.apiKey };
      const args = [
        "sync",
        "--config",
        config,
        "--db",
        path,
        "--since",
        "2026-09-01",
        "--no-entities",
        "--quiet",
      ];
      const sync = await runCliInProcess(args, { env });
      expect(sync.stderr).toBe("");
      expect(sync.code).toBe(0);
      expect(snapshot(path).records).toEqual(records);
      expect(storedIds(projectFilePath(path, "eu"))).toHaveLength(eu.control.size());

      const status = await runCliInProcess(["status", "--db", path, "--json"]);
      const parsed = JSON.parse(status.stdout) as {
        projects: { project: string; records: { total: number } }[];
      };
      expect(parsed.projects.map((p) => [p.project, p.records.total])).toEqual([
        ["default", records.length],
        ["eu", eu.control.size()],
      ]);
      const out = mkdtempSync(join(tmpdir(), "flagtrail-upgrade-report-"));
      const report = await runCliInProcess([
        "report",
        "--db",
        path,
        "--from",
        "2026-10-01",
        "--to",
        "2026-10-31",
        "--out",
        out,
      ]);
      expect(report.code, report.stderr).toBe(0);
      const lines = readFileSync(join(out, "config-edits_2026-10-01_2026-10-31.csv"), "utf8").split("\r\n");
      expect(lines[0]).toMatch(/^\uFEFFproject,time,/);
      const projects = new Set(
        lines
          .slice(1)
          .filter((l) => l !== "")
          .map((l) => l.split(",")[0]),
      );
      expect(projects).toEqual(new Set(["default", "eu"]));
    } finally {
      await eu.close();
    }
  });
});
