// `flagtrail sync --no-entities` into PostgreSQL through the real CLI against the simulator on
// 127.0.0.1: the records, rule diffs, revisions and quarantine it writes; a second sync, a mutation,
// kill -9 then resume, two syncs at once; and the same history written into SQLite and PostgreSQL
// giving the same rows. Each test has a database of its own (test/pg/cluster.ts). The file's first sync
// is spawned (end to end), and every one a test kills or runs beside another; the others, and the reads
// after them, run the CLI in this process.
import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { CHAIN_GENESIS, chainLink } from "../../src/hash.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator, withDb } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

// bigint columns (seq, epoch ms) as numbers, as better-sqlite3 reads them: rows compare across engines.
const int8Parser = pg.types.getTypeParser(pg.types.builtins.INT8);
pg.types.setTypeParser(pg.types.builtins.INT8, Number);
// Put back for the worker's next file (test/leakGuard.ts): the store's own connections set their types.
afterAll(() => pg.types.setTypeParser(pg.types.builtins.INT8, int8Parser));

const startSim = useTestSimulator();

async function count(url: string, sql: string): Promise<number> {
  try {
    const [row] = await queryOnce<{ n: number }>(url, sql);
    return Number(row?.n ?? 0);
  } catch {
    return 0; // tables not created yet
  }
}

/**
 * Polls `sql`'s count every 50 ms over one connection (one a poll, each a server process started, cost
 * more than the polling) until it is at least `atLeast`.
 */
async function waitForCount(url: string, sql: string, atLeast: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let waited = 0; waited < 20_000; waited += 50) {
      const n = await client.query<{ n: string }>(sql).then(
        (result) => Number(result.rows[0]?.n ?? 0),
        () => 0, // tables not created yet
      );
      if (n >= atLeast) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.end();
  }
  throw new Error("condition not reached in time");
}

/** Every id the store holds (records and quarantined) against the simulator's records. */
async function compareIds(sim: RunningSimulator, url: string) {
  const records = await queryOnce<{ id: string }>(url, "SELECT id FROM audit_logs");
  const quarantined = await queryOnce<{ id: string }>(
    url,
    "SELECT DISTINCT record_id AS id FROM quarantine WHERE record_id IS NOT NULL",
  );
  const ids = [...records, ...quarantined].map((r) => r.id);
  return {
    storeCount: ids.length,
    distinct: new Set(ids).size,
    simulatorCount: sim.control.size(),
    unknownToSimulator: ids.filter((id) => sim.control.get(id) === undefined),
  };
}

/** The chain walked from genesis over the rows as stored: seq gapless, every link recomputed. */
async function expectChainIntact(url: string): Promise<void> {
  const rows = await queryOnce<{ seq: number; record_hash: string; chain_hash: string }>(
    url,
    "SELECT seq, record_hash, chain_hash FROM audit_logs ORDER BY seq",
  );
  let link = CHAIN_GENESIS;
  // One expect over all rows (two per row were thousands of expect calls).
  const walked = rows.map((row, i) => {
    link = chainLink(link, row.record_hash);
    return { seq: i + 1, chain_hash: link };
  });
  expect(rows.map((row) => ({ seq: row.seq, chain_hash: row.chain_hash }))).toEqual(walked);
  const meta = await queryOnce<{ key: string; value: string }>(
    url,
    "SELECT key, value FROM meta WHERE key IN ('chain_head_seq', 'chain_head_hash') ORDER BY key",
  );
  expect(meta).toEqual([
    { key: "chain_head_hash", value: link },
    { key: "chain_head_seq", value: String(rows.length) },
  ]);
}

const sync = (env: Record<string, string>, ...args: string[]) =>
  runCli(["sync", "--no-entities", "--json", ...args], { env });
const syncInProcess = (env: Record<string, string>, ...args: string[]) =>
  runCliInProcess(["sync", "--no-entities", "--json", ...args], { env });

describe("flagtrail sync --no-entities into PostgreSQL", () => {
  it("stores the simulator's records, rule diffs and quarantine; status and verify are clean", async () => {
    const sim = await startSim({ records: 400, days: 30, faults: { malformedRate: 0.02 } });
    const url = await freshDatabase("sync");
    const env = simEnv(sim, url);
    const first = await sync(env, "--since", daysAgo(35));
    // Notices only (the granted page size), no error.
    expect(first.stderr).not.toMatch(/error|cannot|not supported/i);
    expect(first.code).toBe(0);
    const summary = JSON.parse(first.stdout);
    expect(summary.quarantined).toBeGreaterThan(0);
    expect(summary.inserted + summary.quarantined).toBe(400);
    expect(await compareIds(sim, url)).toEqual({
      storeCount: 400,
      distinct: 400,
      simulatorCount: 400,
      unknownToSimulator: [],
    });
    // Each raw is the record as served: its id and fields are the simulator's.
    const raws = await queryOnce<{ id: string; raw: string; name: string }>(
      url,
      "SELECT id, raw, name FROM audit_logs",
    );
    for (const row of raws) {
      const parsed = JSON.parse(row.raw);
      expect(parsed.id).toBe(row.id);
      expect(parsed.name).toBe(sim.control.get(row.id)?.name);
    }
    // A rule diff for exactly the records whose changes carry rules.
    const withRules = raws.filter((r) => JSON.parse(r.raw).changes?.rules != null).map((r) => r.id);
    expect(withRules.length).toBeGreaterThan(0);
    const diffed = await queryOnce<{ id: string }>(url, "SELECT audit_log_id AS id FROM rule_diff_summaries");
    expect(diffed.map((r) => r.id).sort()).toEqual(withRules.sort());
    expect(await count(url, "SELECT count(*) AS n FROM rule_changes")).toBeGreaterThan(0);
    // Quarantined records are kept whole with every issue.
    const issues = await queryOnce<{ raw: string; issues: string }>(
      url,
      "SELECT raw, issues FROM quarantine",
    );
    expect(issues).toHaveLength(summary.quarantined);
    for (const row of issues) {
      expect(JSON.parse(row.issues).length).toBeGreaterThan(0);
      expect(sim.control.get(JSON.parse(row.raw).id)).toBeDefined();
    }
    await expectChainIntact(url);
    expect(await count(url, "SELECT count(*) AS n FROM coverage")).toBeGreaterThan(25);
    expect(await count(url, "SELECT count(*) AS n FROM sync_windows")).toBe(0);

    const verify = await runCliInProcess(["verify", "--db", url]);
    expect(verify.stderr).toBe("");
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^OK: hash chain of \d+ records intact/);
    expect(verify.stdout).toMatch(/quarantine: [1-9]\d* rows? match(es its| their) digest/);
    const status = await runCliInProcess(["status", "--json", "--db", url]);
    expect(status.code).toBe(0);
    const parsed = JSON.parse(status.stdout);
    expect(parsed.records.total).toBe(summary.inserted);
    expect(parsed.quarantined.total).toBe(summary.quarantined);
    expect(parsed.runs.map((r: { outcome: string }) => r.outcome)).toEqual(["ok"]);
  });

  it("a second sync stores nothing again; a mutated record becomes a revision; new records come in", async () => {
    const sim = await startSim({ records: 300, days: 20 });
    const url = await freshDatabase("sync");
    // With a signing key, each batch signs the chain head it leaves (verify checks it with the key).
    const env = simEnv(sim, url, { FLAGTRAIL_SIGNING_KEY: "pg-test-key" });
    expect((await syncInProcess(env, "--since", daysAgo(25))).code).toBe(0);
    const again = await syncInProcess(env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ inserted: 0, mutations: 0, quarantined: 0 });
    expect(await count(url, "SELECT count(*) AS n FROM audit_logs")).toBe(300);

    const [victim] = await queryOnce<{ id: string; change_log: string; raw: string }>(
      url,
      "SELECT id, change_log, raw FROM audit_logs ORDER BY seq LIMIT 1",
    );
    sim.control.mutate(victim!.id, { changeLog: "rewritten after the fact" });
    const full = await syncInProcess(env, "--full", "--since", daysAgo(25));
    expect(full.code).toBe(0);
    expect(JSON.parse(full.stdout)).toMatchObject({ mutations: 1, inserted: 0 });
    const [kept] = await queryOnce<{ change_log: string; raw: string }>(
      url,
      "SELECT change_log, raw FROM audit_logs WHERE id = $1",
      [victim!.id],
    );
    expect(kept).toEqual({ change_log: victim!.change_log, raw: victim!.raw });
    const revisions = await queryOnce<{ raw: string }>(
      url,
      "SELECT raw FROM audit_log_revisions WHERE audit_log_id = $1",
      [victim!.id],
    );
    expect(revisions.map((r) => JSON.parse(r.raw).changeLog)).toEqual(["rewritten after the fact"]);
    // Seen once more: still one revision.
    expect(JSON.parse((await syncInProcess(env, "--full", "--since", daysAgo(25))).stdout).mutations).toBe(0);

    const fresh = sim.control.insertAtHead(3);
    const newer = await syncInProcess(env);
    expect(newer.code).toBe(0);
    expect(JSON.parse(newer.stdout)).toMatchObject({ inserted: 3 });
    const [checkpoint] = await queryOnce<{ latest_id: string }>(url, "SELECT latest_id FROM checkpoints");
    expect(checkpoint?.latest_id).toBe(fresh[2]?.id);
    expect(await compareIds(sim, url)).toMatchObject({
      storeCount: 303,
      distinct: 303,
      unknownToSimulator: [],
    });
    await expectChainIntact(url);
    expect((await runCliInProcess(["verify", "--db", url], { env })).code).toBe(0);
    const otherKey = await runCliInProcess(["verify", "--db", url], {
      env: { ...env, FLAGTRAIL_SIGNING_KEY: "another-key" },
    });
    expect(otherKey.code).toBe(1);
    expect(otherKey.stderr).toMatch(/signature does not match the record it was made over \(seq 303,/);
  });
});

describe("flagtrail sync into PostgreSQL: bad input", () => {
  it("a wrong password: one sentence, password masked, exit 1, no request sent", async () => {
    const sim = await startSim({ records: 50, days: 5 });
    const url = new URL(await freshDatabase("badpw"));
    url.password = "s3cret-wrong";
    const result = await runCliInProcess(["sync", "--no-entities", "--db", url.toString()], {
      env: simEnv(sim, url.toString()),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/refused the login .*wrong user name or password/);
    expect(result.stderr).toContain(":***@");
    expect(result.stderr).not.toMatch(/s3cret/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(sim.control.counters().requests).toEqual({});
  });
});

describe("flagtrail sync into PostgreSQL: crashes and exclusion", () => {
  it("resumes after kill -9 without re-reading finished windows, ending in exact set equality", async () => {
    // Slow enough that the kill lands between batch commits.
    const sim = await startSim({ records: 1200, days: 100, faults: { latencyMs: 100 } });
    const url = await freshDatabase("kill");
    const env = simEnv(sim, url);
    const args = [
      "sync",
      "--no-entities",
      "--since",
      daysAgo(105),
      "--page-size",
      "20",
      "--concurrency",
      "1",
    ];
    let child: ChildProcess | undefined;
    const killed = runCli([...args, "--quiet"], {
      env,
      onSpawn: (c) => {
        child = c;
      },
    });
    await waitForCount(url, "SELECT count(*) AS n FROM sync_windows WHERE status = 'done'", 2);
    child!.kill("SIGKILL");
    expect((await killed).signal).toBe("SIGKILL");
    const partial = await count(url, "SELECT count(*) AS n FROM audit_logs");
    expect(partial).toBeLessThan(1200);
    const doneWindows = await queryOnce<{ start_date: string; end_date: string }>(
      url,
      "SELECT start_date, end_date FROM sync_windows WHERE status = 'done'",
    );
    expect(doneWindows.length).toBeGreaterThan(0);

    sim.control.setFaults({});
    // A request the killed process sent just before dying may still be answered: let it finish.
    await new Promise((resolve) => setTimeout(resolve, 300));
    sim.control.resetCounters();
    const resumed = await runCliInProcess(["sync", "--no-entities", "--no-coverage", "--json"], { env });
    expect(resumed.code).toBe(0);
    const summary = JSON.parse(resumed.stdout);
    expect(summary.resumed).toBe(true);
    expect(summary.inserted).toBe(1200 - partial);
    expect(await compareIds(sim, url)).toEqual({
      storeCount: 1200,
      distinct: 1200,
      simulatorCount: 1200,
      unknownToSimulator: [],
    });
    const queries = sim.control.counters().lastQueries.map((q) => new URLSearchParams(q));
    for (const w of doneWindows) {
      const again = queries.filter(
        (q) =>
          q.get("startDate") === w.start_date && q.get("endDate") === w.end_date && q.get("page") === "1",
      );
      expect(again).toEqual([]);
    }
    await expectChainIntact(url);
    const outcomes = await queryOnce<{ outcome: string }>(url, "SELECT outcome FROM sync_runs ORDER BY id");
    expect(outcomes.map((r) => r.outcome)).toEqual(["interrupted", "ok"]);
    expect((await runCliInProcess(["verify", "--db", url])).code).toBe(0);
  });

  it("refuses a second sync while one runs (the lease), and both together store each record once", async () => {
    // 60 pages at 150 ms: the first sync runs ~9 s, and the second starts as soon as the first holds the
    // lease (its first rows come only with its first batch, seconds later: under a loaded CI the first
    // sync had finished by the time a second CLI had started).
    const sim = await startSim({ records: 600, days: 30, faults: { latencyMs: 150 } });
    const url = await freshDatabase("lease");
    const env = simEnv(sim, url);
    const first = runCli(
      ["sync", "--no-entities", "--since", daysAgo(32), "--page-size", "10", "--concurrency", "1", "--quiet"],
      { env },
    );
    await waitForCount(url, "SELECT count(*) AS n FROM leases", 1);
    const second = await runCliInProcess(["sync", "--no-entities", "--since", daysAgo(32), "--quiet"], {
      env,
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/Another sync is running on this database/);
    expect(second.stderr.trim().split("\n")).toHaveLength(1);
    expect(await count(url, "SELECT count(*) AS n FROM sync_runs")).toBe(1);
    // The second was refused: the first's remaining pages need not be slow any more.
    sim.control.setFaults({});
    expect((await first).code).toBe(0);
    expect(await compareIds(sim, url)).toEqual({
      storeCount: 600,
      distinct: 600,
      simulatorCount: 600,
      unknownToSimulator: [],
    });
    // Given back at the end: a next sync runs.
    expect(await count(url, "SELECT count(*) AS n FROM leases")).toBe(0);
    expect((await runCliInProcess(["sync", "--no-entities", "--quiet"], { env })).code).toBe(0);
    await expectChainIntact(url);
  });
});

/**
 * Rows of one query on the SQLite store and on the PostgreSQL one; `{C}` stands for COLLATE "C" on
 * PostgreSQL (SQLite's own byte order, which it has no name for).
 */
async function bothRows(path: string, url: string, sql: string) {
  const lite = withDb(path, (d) => d.prepare(sql.replaceAll("{C}", "")).all());
  const pgRows = await queryOnce(url, sql.replaceAll("{C}", 'COLLATE "C"'));
  return { lite, pg: pgRows };
}

describe("the same history into SQLite and into PostgreSQL", () => {
  it("gives the same records, rule diffs, quarantine, coverage and chain head", async () => {
    const sim = await startSim({ records: 500, days: 40, faults: { malformedRate: 0.02 } });
    const path = tempDbPath("flagtrail-pgsame-");
    const url = await freshDatabase("same");
    // One window at a time: pages then commit in one order, so seq (and the chain) is the same on both.
    const args = ["--since", daysAgo(45), "--concurrency", "1"];
    const [lite, pgRun] = [
      await syncInProcess(simEnv(sim, path), ...args),
      await syncInProcess(simEnv(sim, url), ...args),
    ];
    expect(lite.code).toBe(0);
    expect(pgRun.code).toBe(0);
    const strip = (summary: Record<string, unknown>) => ({ ...summary, seconds: 0 });
    expect(strip(JSON.parse(pgRun.stdout))).toEqual(strip(JSON.parse(lite.stdout)));

    // Every column but the time each was first seen (two runs, two clocks); COLLATE "C" is SQLite's order.
    const records = await bothRows(
      path,
      url,
      `SELECT seq, id, name, action_type, change_log, updated_by, updated_by_user_id, modifier_email,
         occurred_at, server_day, date_text, time_text, tags, raw, record_hash, chain_hash, sync_run_id, changes
       FROM audit_logs ORDER BY seq`,
    );
    expect(records.lite.length).toBeGreaterThan(400);
    expect(records.pg).toEqual(records.lite);
    for (const sql of [
      `SELECT id, audit_log_id, rule_id, rule_name, change, field, old_value, new_value, old_position, new_position
       FROM rule_changes ORDER BY id`,
      "SELECT audit_log_id, summary, diff_version FROM rule_diff_summaries ORDER BY audit_log_id {C}",
      `SELECT id, record_id, raw, raw_hash, issues, request_path, sync_run_id, server_day, day_min, day_max
       FROM quarantine ORDER BY id`,
      `SELECT filter_key, day, server_total, local_count, sync_run_id, day_closed, quarantined_count
       FROM coverage ORDER BY filter_key {C}, day {C}`,
      "SELECT audit_log_id, day FROM listed_days ORDER BY audit_log_id {C}",
      `SELECT key, value FROM meta WHERE key IN ('chain_head_seq', 'chain_head_hash', 'rule_diffs_backfilled')
       ORDER BY key {C}`,
      "SELECT filter_key, latest_id, latest_occurred_at FROM checkpoints ORDER BY filter_key {C}",
    ]) {
      const rows = await bothRows(path, url, sql);
      expect(rows.pg, sql).toEqual(rows.lite);
    }
    const ruleChanges = await count(url, "SELECT count(*) AS n FROM rule_changes");
    expect(ruleChanges).toBeGreaterThan(0);
    const [liteVerify, pgVerify] = [
      await runCliInProcess(["verify", "--db", path]),
      await runCliInProcess(["verify", "--db", url]),
    ];
    expect(pgVerify.code).toBe(0);
    expect(pgVerify.stdout).toBe(liteVerify.stdout);
  });
});
