// `flagtrail check` end to end: the real CLI syncs the real simulator (with planted cases) into a store
// on each engine, then checks it. Each control finds exactly its planted cases; exit codes 0/1/2; JUnit
// is well-formed XML with one test case per control; findings are kept once across runs. A few calls are
// spawned: check on each engine, waive on SQLite, unwaive on PostgreSQL; the sync, verify and the many
// other calls run the CLI in this process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nextWaiverRow } from "../../src/controls/waivers.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { appendWaiver } from "../../src/store/controls/waivers.ts";
import { openAnyStore } from "../../src/store/openAny.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";
import { CONTROLS, type Planted, plant } from "./plant.ts";
import { parseXml } from "./xml.ts";

interface JsonFinding {
  id: string;
  control: string;
  kind: string;
  severity: string;
  project: string;
  recordId: string | null;
  entity: string | null;
  actionType: string | null;
  occurredAt: string | null;
  firstSeenAt: string;
  actor: string | null;
  message: string;
  waiver: { by: string; reason: string; at: string; expires: string | null } | null;
}

const DAY = 86_400_000;

describe.each(ENGINES)("flagtrail check on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let planted: Planted;
  let env: Record<string, string>;
  const period = ["--from", daysAgo(6), "--to", daysAgo(2)];

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 300, days: 30, timeZone: "UTC" });
    const today = Date.parse(`${daysAgo(0)}T00:00:00Z`);
    planted = plant(sim, today - 3 * DAY);
    store = await testStore(engine);
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: store.config({ controls: CONTROLS }) });
    // Days 6 and 5 ago are never synced: the completeness control's two planted gaps.
    const sync = await runCliInProcess(["sync", "--since", daysAgo(4), "--quiet"], { env });
    expect(sync.stderr).toBe("");
    expect(sync.code).toBe(0);
    // The "stale" control (maxAgeHours 0.0001, 0.36 s) must find this sync stale: wait until it is, not
    // on a spawned check happening to start later than that.
    const staleAfter = Date.now() + 0.0001 * 3_600_000;
    while (Date.now() <= staleAfter) await new Promise((resolve) => setTimeout(resolve, 50));
  });

  afterAll(async () => {
    await sim?.close();
  });

  const check = (args: string[] = [], extra: Record<string, string> = {}) =>
    runCliInProcess(["check", ...period, ...args], { env: { ...env, ...extra } });
  const cli = (args: string[]) => runCliInProcess(args, { env });

  it("finds exactly the planted cases of each kind, and exits 1 saying so", async () => {
    const result = await runCli(["check", ...period, "--format", "json"], { env });
    expect(result.code).toBe(1);
    const findings = JSON.parse(result.stdout) as JsonFinding[];
    const byControl = (id: string) => findings.filter((f) => f.control === id);
    for (const [control, ids] of Object.entries(planted.expected)) {
      expect(
        byControl(control)
          .map((f) => f.recordId)
          .sort(),
        control,
      ).toEqual(ids);
    }
    expect(byControl("fresh")).toEqual([]);
    expect(byControl("stale")).toHaveLength(1);
    expect(byControl("stale")[0]?.message).toMatch(/more than 0.0001 hours ago/);
    expect(byControl("complete").map((f) => f.id)).toEqual([
      `complete:day-${daysAgo(6)}`,
      `complete:day-${daysAgo(5)}`,
    ]);
    expect(byControl("intact")).toEqual([]);
    const rr = byControl("rr")[0]!;
    expect(rr).toMatchObject({
      id: `rr:${planted.expected.rr![0]}`,
      kind: "review-required",
      severity: "high",
      project: "default",
      entity: "ctl_rr_bad",
      actionType: "gate_update",
      actor: "Alice Ng",
      waiver: null,
    });
    expect(rr.occurredAt).toMatch(/^\d{4}-\d{2}-\d{2}T10:00:00\.000\+00:00$/);
    const unwaived = findings.length;
    expect(result.stderr).toBe(
      `flagtrail: ${unwaived} unwaived findings at or above low severity (controls rr, sa, cw, tk, ra, stale, complete).\n`,
    );
    // The ticket keys found are stored per change.
    const tickets = await store.query<{ record_id: string; ticket: string }>(
      "SELECT record_id, ticket FROM control_tickets WHERE control_id = 'tk' ORDER BY record_id",
    );
    expect(Object.fromEntries(tickets.map((t) => [t.record_id, t.ticket]))).toEqual(planted.tickets);
  });

  it("keeps each finding once however often it runs; first seen stays, last seen moves", async () => {
    const before = await store.query<{ id: string; first_seen_at: number; last_seen_at: number }>(
      "SELECT id, first_seen_at, last_seen_at FROM control_findings ORDER BY id",
    );
    expect(before.length).toBeGreaterThan(0);
    const again = await check(["--format", "json"]);
    expect(again.code).toBe(1);
    const after = await store.query<{ id: string; first_seen_at: number; last_seen_at: number }>(
      "SELECT id, first_seen_at, last_seen_at FROM control_findings ORDER BY id",
    );
    expect(after.map((r) => r.id)).toEqual(before.map((r) => r.id));
    for (const [i, row] of after.entries()) {
      expect(Number(row.first_seen_at)).toBe(Number(before[i]!.first_seen_at));
      expect(Number(row.last_seen_at)).toBeGreaterThan(Number(before[i]!.last_seen_at));
    }
    // Both sorted here: PostgreSQL's ORDER BY follows the database's collation (j before W).
    expect(
      JSON.parse(again.stdout)
        .map((f: JsonFinding) => f.id)
        .sort(),
    ).toEqual(before.map((r) => r.id).sort());
  });

  // h42: it was a <failure> per finding (tests="6" failures="345"); JUnit readers expect at most one a case.
  it("prints JUnit XML: one test case per control, one failure listing its findings", async () => {
    const result = await check(["--format", "junit"]);
    expect(result.code).toBe(1);
    const root = parseXml(result.stdout);
    expect(root.name).toBe("testsuites");
    const suite = root.children[0]!;
    const cases = suite.children;
    expect(cases.map((c) => c.attributes.name)).toEqual(CONTROLS.map((c) => c.id));
    const failures = (id: string) =>
      cases.find((c) => c.attributes.name === id)!.children.filter((c) => c.name === "failure");
    for (const c of cases) expect(failures(c.attributes.name!).length).toBeLessThanOrEqual(1);
    const listed = (id: string) =>
      failures(id).flatMap((f) => f.text.split("\n").map((line) => line.split(":")[1]));
    for (const [control, ids] of Object.entries(planted.expected)) {
      expect(listed(control).sort()).toEqual(ids);
      expect(failures(control)[0]!.attributes.message).toBe(
        `${ids.length} unwaived ${ids.length === 1 ? "finding" : "findings"}`,
      );
    }
    expect(failures("fresh")).toEqual([]);
    expect(listed("complete")).toHaveLength(2);
    const failing = cases.filter((c) => failures(c.attributes.name!).length === 1).length;
    for (const counts of [root.attributes, suite.attributes]) {
      expect(counts.failures).toBe(String(failing));
      expect(counts.tests).toBe(String(CONTROLS.length));
    }
  });

  it("JUnit fails only the test cases --fail-on fails; findings below it are in a passing case's system-out", async () => {
    const lowOnly = store.config({ controls: CONTROLS.filter((c) => c.id === "tk") }, "low.json");
    const pass = await check(["--fail-on", "high", "--format", "junit"], { FLAGTRAIL_CONFIG: lowOnly });
    expect(pass.stderr).toBe("");
    expect(pass.code).toBe(0);
    const root = parseXml(pass.stdout);
    const suite = root.children[0]!;
    for (const counts of [root.attributes, suite.attributes])
      expect(counts).toMatchObject({ tests: "1", failures: "0" });
    const [tk] = suite.children;
    expect(tk!.children.map((c) => c.name)).toEqual(["system-out"]);
    const [recordId] = planted.expected.tk!;
    expect(tk!.children[0]!.text).toMatch(
      new RegExp(`^open tk:${recordId} \\(low, below high\\): \\S+ \\| ctl_tk_`),
    );

    // Every control: the high ones fail their case (and the run), medium and low ones pass theirs.
    const all = await check(["--fail-on", "high", "--format", "junit"]);
    expect(all.code).toBe(1);
    const cases = parseXml(all.stdout).children[0]!.children;
    const failed = cases.filter((c) => c.children.some((child) => child.name === "failure"));
    expect(failed.map((c) => c.attributes.name).sort()).toEqual(["complete", "ra", "rr", "sa"]);
    for (const id of ["cw", "tk", "stale"]) {
      const out = cases.find((c) => c.attributes.name === id)!.children;
      expect(out.map((c) => c.name)).toEqual(["system-out"]);
      expect(out[0]!.text).toMatch(/^open \S+ \((low|medium), below high\): /);
    }
  });

  it("exits 0 when nothing reaches --fail-on, 2 on bad usage or a bad config", async () => {
    const lowOnly = store.config({ controls: CONTROLS.filter((c) => c.id === "tk") }, "low.json");
    const pass = await check(["--fail-on", "medium", "--format", "json"], { FLAGTRAIL_CONFIG: lowOnly });
    expect(pass.stderr).toBe("");
    expect(pass.code).toBe(0);
    expect(JSON.parse(pass.stdout).map((f: JsonFinding) => f.recordId)).toEqual(planted.expected.tk);
    const fails = await check(["--fail-on", "low"], { FLAGTRAIL_CONFIG: lowOnly });
    expect(fails.code).toBe(1);
    expect(fails.stdout).toContain("tk (ticket-reference, low): 1 open, 0 waived");
    // Every time of the table in one format: the period's as the findings'.
    const times = fails.stdout.match(/\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)?/g) ?? [];
    expect(times.length).toBeGreaterThan(2);
    expect(times.filter((t) => !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/.test(t))).toEqual([]);

    const typo = store.config(
      { controls: [{ id: "cc81-review", kind: "review-required", severity: "high", entityPatern: "x" }] },
      "typo.json",
    );
    const bad = await check([], { FLAGTRAIL_CONFIG: typo });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(`flagtrail: ${typo}: control "cc81-review": unknown field entityPatern.\n`);
    const noKind = store.config({ controls: [{ id: "x1", kind: "vibes", severity: "low" }] }, "kind.json");
    const badKind = await check([], { FLAGTRAIL_CONFIG: noKind });
    expect(badKind.code).toBe(2);
    expect(badKind.stderr).toMatch(/control "x1": kind: must be one of review-required/);
    expect((await check(["--format", "xml"])).code).toBe(2);
    expect((await check(["--fail-on", "critical"])).code).toBe(2);
    expect((await cli(["check", "--from", "2026-13-01"])).code).toBe(2);
  });

  it("waives: the finding shows its waiver, stops failing, and status counts it as waived", async () => {
    const rrId = `rr:${planted.expected.rr![0]}`;
    const waived = await (engine === "sqlite" ? runCli : runCliInProcess)(
      ["waive", rrId, "--reason", "hotfix, see INC-42", "--by", "Dana Lee"],
      { env },
    );
    expect(waived.stderr).toBe("");
    expect(waived.code).toBe(0);
    expect(waived.stdout).toBe(`Waived ${rrId} (project default).\n`);
    const result = await check(["--format", "json"]);
    const rr = (JSON.parse(result.stdout) as JsonFinding[]).find((f) => f.id === rrId)!;
    expect(rr.waiver).toMatchObject({ by: "Dana Lee", reason: "hotfix, see INC-42", expires: null });
    // One format for every time of the output: the waiver's as the finding's (not Z beside +00:00).
    const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/;
    expect([rr.occurredAt, rr.firstSeenAt, rr.waiver!.at]).toEqual([
      expect.stringMatching(iso),
      expect.stringMatching(iso),
      expect.stringMatching(iso),
    ]);
    expect(result.stderr).toMatch(/controls sa, cw, tk, ra, stale, complete\)/);
    // Every high finding waived: --fail-on high passes, the lower ones still fail --fail-on low.
    const high = (JSON.parse(result.stdout) as JsonFinding[]).filter(
      (f) => f.severity === "high" && !f.waiver,
    );
    for (const f of high) {
      const w = await cli([
        "waive",
        f.id,
        "--reason",
        "accepted",
        "--by",
        "Dana Lee",
        "--expires",
        daysAgo(-30),
      ]);
      expect(w.code).toBe(0);
    }
    expect((await check(["--fail-on", "high"])).code).toBe(0);
    expect((await check(["--fail-on", "low"])).code).toBe(1);
    const status = await cli(["status"]);
    expect(status.stdout).toMatch(
      /^Controls: \d+ open findings \(cw 2, stale 1, tk 1\), 7 waived; last check /m,
    );
    // Unknown finding, past expiry: bad usage.
    expect((await cli(["waive", "rr:nope", "--reason", "x", "--by", "y"])).code).toBe(2);
    const past = await cli(["waive", rrId, "--reason", "x", "--by", "y", "--expires", daysAgo(1)]);
    expect(past.code).toBe(2);
  });

  it("an expired or withdrawn waiver re-opens its finding", async () => {
    const saId = `sa:${planted.expected.sa![0]}`;
    // A waiver that ended yesterday, appended as `waive` appends it (a clock cannot be moved for the CLI).
    const opened = await openAnyStore(store.db);
    try {
      await appendWaiver(opened, (previous) =>
        nextWaiverRow(previous, {
          finding_id: saId,
          action: "waive",
          reason: "until yesterday",
          by_name: "Dana Lee",
          expires: daysAgo(1),
          created_at: Date.now() - 5 * DAY,
        }),
      );
    } finally {
      await opened.close();
    }
    const result = await check(["--format", "json"]);
    expect((JSON.parse(result.stdout) as JsonFinding[]).find((f) => f.id === saId)?.waiver).toBeNull();
    expect((await check(["--fail-on", "high"])).code).toBe(1);
    const raId = `ra:${planted.expected.ra![0]}`;
    const un = await (engine === "postgres" ? runCli : runCliInProcess)(
      ["unwaive", raId, "--by", "Dana Lee"],
      {
        env,
      },
    );
    expect(un.code).toBe(0);
    const after = JSON.parse((await check(["--format", "json"])).stdout) as JsonFinding[];
    expect(after.find((f) => f.id === raId)?.waiver).toBeNull();
    expect((await cli(["unwaive", raId, "--by", "Dana Lee"])).code).toBe(2);
    const verified = await cli(["verify"]);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/waiver register of [1-9]\d* rows intact/);
  });

  it("verify names an edited waiver row; the integrity control finds it", async () => {
    const [row] = await store.query<{ seq: number; reason: string }>(
      "SELECT seq, reason FROM control_waivers ORDER BY seq LIMIT 1",
    );
    await store.query("UPDATE control_waivers SET reason = 'nothing to see' WHERE seq = ?", [row!.seq]);
    const verify = await runCliInProcess(["verify"], { env });
    expect(verify.code).toBe(1);
    expect(verify.stderr).toMatch(
      /Waiver row seq 1 \(finding rr:[^)]+\) has been changed: its content does not match its hash/,
    );
    const integrity = (JSON.parse((await check(["--format", "json"])).stdout) as JsonFinding[]).filter(
      (f) => f.kind === "integrity",
    );
    expect(integrity.map((f) => f.message)).toEqual([
      expect.stringMatching(/^verify fails: .*waiver row seq 1/),
    ]);
    await store.query("UPDATE control_waivers SET reason = ? WHERE seq = ?", [row!.reason, row!.seq]);
    expect((await cli(["verify"])).code).toBe(0);
  });

  it("verify names waiver rows removed from the end of the register (a withdrawal deleted)", async () => {
    const columns = "seq, finding_id, action, reason, by_name, expires, created_at, hash, chain_hash";
    const rows = await store.query<Record<string, unknown>>(
      `SELECT ${columns} FROM control_waivers ORDER BY seq`,
    );
    const last = rows.at(-1)!;
    expect(last.action).toBe("unwaive");
    await store.query("DELETE FROM control_waivers WHERE seq = ?", [last.seq]);
    const verify = await runCliInProcess(["verify"], { env });
    expect(verify.code).toBe(1);
    expect(verify.stderr).toMatch(
      /waiver register's head recorded in meta \(waiver_chain:head\) is not its last row \(seq \d+\): rows were removed/,
    );
    await store.query("DELETE FROM control_waivers");
    expect((await runCliInProcess(["verify"], { env })).stderr).toMatch(/is not its last row \(no rows\)/);
    for (const row of rows) {
      await store.query(
        `INSERT INTO control_waivers (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        columns.split(", ").map((c) => row[c]),
      );
    }
    expect((await cli(["verify"])).code).toBe(0);
  });

  it("finds a broken hash chain with the integrity control", async () => {
    const [victim] = await store.query<{ id: string }>(
      "SELECT id FROM audit_logs WHERE name NOT LIKE 'ctl_%' ORDER BY seq LIMIT 1",
    );
    // On SQLite change_log is read from the record itself (a virtual column): the record is edited.
    const edit =
      engine === "sqlite"
        ? "UPDATE audit_logs SET raw_data = json_set(raw_data, '$.changeLog', 'edited behind its back') WHERE id = ?"
        : "UPDATE audit_logs SET change_log = 'edited behind its back' WHERE id = ?";
    await store.query(edit, [victim!.id]);
    const result = await check(["--format", "json"]);
    const integrity = (JSON.parse(result.stdout) as JsonFinding[]).filter((f) => f.kind === "integrity");
    // Only what this run finds: the waiver row of the test before is intact again.
    expect(integrity).toHaveLength(1);
    expect(integrity[0]!.message).toMatch(/^verify fails: /);
  });
});
