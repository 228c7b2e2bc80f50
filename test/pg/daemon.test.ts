// `flagtrail daemon` and `flagtrail demo` on a PostgreSQL store against the simulator on 127.0.0.1:
// through real CLI processes, two daemons on one database (one syncs, the other skips) and the lease
// taken over after kill -9 of its holder (the advisory lock dies with the session); with the CLI in this
// process (what they check is output, not a process; test/integration/demo.test.ts spawns the demo),
// `--once --report` writing what it writes on SQLite, the demo printing the store's URL with its
// password masked, and the reads after the daemons (verify, status, a last --once).
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { previousPeriod, todayIn } from "../../src/daemon/periods.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { LEASE_LOCK_CLASS } from "../../src/store/pg/leaseLocks.ts";
import { maskUrl } from "../../src/storeLocation.ts";
import {
  type DaemonProcess,
  logEvents,
  requestsServed,
  spawnDaemon,
  waitUntil,
} from "../helpers/daemonProcess.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator, withDb } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const startSim = useTestSimulator();

interface RunRow {
  outcome: string;
  pid: number;
}

async function runs(url: string): Promise<RunRow[]> {
  try {
    return await queryOnce<RunRow>(url, "SELECT outcome, pid FROM sync_runs ORDER BY id");
  } catch {
    return []; // tables not created yet
  }
}

async function audited(url: string): Promise<number> {
  try {
    const [row] = await queryOnce<{ n: number }>(url, "SELECT count(*)::int AS n FROM audit_logs");
    return row?.n ?? 0;
  } catch {
    return 0; // tables not created yet
  }
}

/** Lease rows, and advisory locks of flagtrail's lease class held in this database by any session. */
async function leftovers(url: string): Promise<{ rows: number; locks: number }> {
  const [row] = await queryOnce<{ rows: number; locks: number }>(
    url,
    `SELECT (SELECT count(*) FROM leases)::int AS rows,
       (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))::int AS locks`,
    [LEASE_LOCK_CLASS],
  );
  return row!;
}

/** Every id the store holds (records and quarantined) against the simulator's records. */
async function compareIds(sim: RunningSimulator, url: string) {
  const rows = await queryOnce<{ id: string }>(
    url,
    "SELECT id FROM audit_logs UNION ALL SELECT DISTINCT record_id FROM quarantine WHERE record_id IS NOT NULL",
  );
  const ids = rows.map((r) => r.id);
  return {
    storeCount: ids.length,
    distinct: new Set(ids).size,
    simulatorCount: sim.control.size(),
    unknownToSimulator: ids.filter((id) => sim.control.get(id) === undefined),
  };
}

function expectSameSet(comparison: Awaited<ReturnType<typeof compareIds>>): void {
  expect(comparison.unknownToSimulator).toEqual([]);
  expect(comparison.distinct).toBe(comparison.storeCount);
  expect(comparison.storeCount).toBe(comparison.simulatorCount);
}

const count = (stderr: string, event: string) => logEvents(stderr).filter((e) => e.event === event).length;

// Small pages and a little latency make one sync last a few seconds, so signals land mid-cycle.
const scheduled = [
  "--cron",
  "* * * * * *",
  "--since",
  daysAgo(105),
  "--page-size",
  "20",
  "--concurrency",
  "1",
];

describe("flagtrail daemon on PostgreSQL", () => {
  it("two daemons on one database: one syncs, the other skips every tick; SIGTERM leaves nothing held", async () => {
    const sim = await startSim({ records: 600, days: 100, faults: { latencyMs: 60 } });
    const url = await freshDatabase("daemon");
    const password = new URL(url).password;
    const env = simEnv(sim, url);

    const first = spawnDaemon(scheduled, env);
    await waitUntil(async () => (await runs(url)).some((r) => r.outcome === "running"), "the first sync");
    const second = spawnDaemon(scheduled, env);
    await waitUntil(
      () => count(second.stderrSoFar(), "tick.skipped") >= 2,
      "the second daemon to skip ticks",
    );
    expect((await runs(url)).map((r) => r.pid)).not.toContain(second.child().pid);

    // The idle one first, so that it cannot take the lease over once the first one has given it back.
    second.child().kill("SIGTERM");
    const secondResult = await second.done;
    expect(secondResult.code, secondResult.stderr).toBe(0);
    // Every request from now on is held 2 s by the server: once one has arrived, a cycle is waiting on
    // it, so SIGTERM lands mid-cycle rather than between two.
    sim.control.setFaults({ latencyMs: 2000 });
    const before = requestsServed(sim);
    await waitUntil(() => requestsServed(sim) > before, "a request held by the server");
    first.child().kill("SIGTERM");
    const firstResult = await first.done;
    expect(firstResult.code, firstResult.stderr).toBe(0);

    const firstEvents = logEvents(firstResult.stderr).map((e) => e.event);
    expect(firstEvents).toEqual(
      expect.arrayContaining(["daemon.start", "lease.acquired", "cycle.start", "signal", "daemon.stop"]),
    );
    expect(firstEvents.at(-1)).toBe("daemon.stop");
    const secondEvents = logEvents(secondResult.stderr);
    expect(secondEvents.some((e) => e.event === "cycle.start")).toBe(false);
    expect(secondEvents.some((e) => e.event === "lease.acquired")).toBe(false);
    expect(String(secondEvents.find((e) => e.event === "tick.skipped")?.reason)).toContain(
      `process ${first.child().pid}`,
    );
    for (const output of [firstResult.stderr, secondResult.stderr]) {
      expect(output).not.toContain(password);
      expect(output).not.toContain(sim.settings.apiKey);
    }

    const after = await runs(url);
    expect(
      after.map((r) => r.outcome),
      firstResult.stderr,
    ).toContain("interrupted");
    expect(after.some((r) => r.outcome === "running")).toBe(false);
    expect(await leftovers(url)).toEqual({ rows: 0, locks: 0 });

    const verify = await runCliInProcess(["verify", "--db", url], { env });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    sim.control.setFaults({});
    const once = await runCliInProcess(["daemon", "--once", ...scheduled.slice(2)], { env });
    expect(once.code, once.stderr).toBe(0);
    expectSameSet(await compareIds(sim, url));
    expect(await leftovers(url)).toEqual({ rows: 0, locks: 0 });
  });

  it("kill -9 of the daemon holding the lease mid-cycle: the other one takes it over and completes", async () => {
    const sim = await startSim({ records: 600, days: 100, faults: { latencyMs: 60 } });
    const url = await freshDatabase("daemon_kill");
    const env = simEnv(sim, url);

    // Both start together; whichever takes the lease is killed mid-cycle, once pages have committed.
    const daemons = [spawnDaemon(scheduled, env), spawnDaemon(scheduled, env)];
    const holds = (d: DaemonProcess) => count(d.stderrSoFar(), "lease.acquired") > 0;
    const refused = (d: DaemonProcess) =>
      count(d.stderrSoFar(), "tick.skipped") + count(d.stderrSoFar(), "lease.busy") > 0;
    // The holder may log tick.skipped too (a tick while its own cycle runs): wait for the other's refusal.
    const holderAndRefused = () =>
      daemons.find((d) => holds(d) && daemons.some((o) => o !== d && refused(o)));
    await waitUntil(
      () => holderAndRefused() !== undefined,
      "one daemon to hold the lease, the other refused",
    );
    const holder = holderAndRefused()!;
    const other = daemons.find((d) => d !== holder)!;
    expect(holds(other)).toBe(false);
    await waitUntil(async () => (await audited(url)) > 0, "the first pages to commit");
    // As above: a request held by the server means the holder is mid-cycle when it is killed.
    sim.control.setFaults({ latencyMs: 2000 });
    const before = requestsServed(sim);
    await waitUntil(() => requestsServed(sim) > before, "a request held by the server");
    const killedPid = holder.child().pid;
    holder.child().kill("SIGKILL");
    expect((await holder.done).signal).toBe("SIGKILL");
    // The kill has landed mid-cycle: the other daemon's take-over and cycle need no latency.
    sim.control.setFaults({});
    // The holder died mid-cycle: its session, and so its advisory lock, is gone with it.
    await waitUntil(
      () => logEvents(other.stderrSoFar()).some((e) => e.event === "cycle.end" && e.outcome === "ok"),
      "the other daemon to complete a cycle",
    );
    other.child().kill("SIGTERM");
    const otherResult = await other.done;
    expect(otherResult.code, otherResult.stderr).toBe(0);

    const acquired = logEvents(otherResult.stderr).filter((e) => e.event === "lease.acquired");
    expect(acquired).toHaveLength(1);
    expect(String(acquired[0]!.tookOverFrom)).toContain(`/${killedPid}/`);
    const after = await runs(url);
    expect(after.filter((r) => r.pid === killedPid).at(-1)?.outcome).toBe("interrupted");
    expect(after.some((r) => r.outcome === "running")).toBe(false);
    expectSameSet(await compareIds(sim, url));
    expect(await leftovers(url)).toEqual({ rows: 0, locks: 0 });
  });

  it("--once --report monthly writes the same report files as on SQLite; status shows the cycle", async () => {
    const sim = await startSim({ records: 600, days: 100 });
    const url = await freshDatabase("daemon_report");
    const sqlite = tempDbPath();
    const outs = { sqlite: join(dirname(sqlite), "reports-sqlite"), pg: join(dirname(sqlite), "reports-pg") };
    // Both in this process (the daemons above are the spawned ones on PostgreSQL).
    const once = (db: string, out: string) =>
      runCliInProcess(
        ["daemon", "--once", "--since", daysAgo(105), "--report", "monthly", "--tz", "Europe/Berlin"].concat([
          "--out",
          out,
          "--json",
        ]),
        { env: simEnv(sim, db) },
      );
    const onSqlite = await once(sqlite, outs.sqlite);
    const onPg = await once(url, outs.pg);
    expect(onSqlite.code, onSqlite.stderr).toBe(0);
    expect(onPg.code, onPg.stderr).toBe(0);

    const { from, to } = previousPeriod("monthly", todayIn("Europe/Berlin"));
    const end = logEvents(onPg.stderr).find((e) => e.event === "cycle.end");
    expect(end?.report).toMatchObject({ from, to });
    const files = readdirSync(outs.pg).sort();
    expect(files).toEqual(readdirSync(outs.sqlite).sort());
    const name = (kind: string, ext: string) => `${kind}_${from}_${to}_Europe-Berlin.${ext}`;
    expect(files).toEqual(
      [
        name("compliance", "md"),
        name("config-edits", "csv"),
        name("experiment-state-changes", "csv"),
        name("manifest", "json"),
        name("unreviewed-changes", "csv"),
      ].sort(),
    );
    // The same history gives the same rows: the CSV files are byte-identical across engines.
    for (const file of files.filter((f) => f.endsWith(".csv"))) {
      expect(readFileSync(join(outs.pg, file)), file).toEqual(readFileSync(join(outs.sqlite, file)));
    }
    const stored = withDb(sqlite, (d) => d.prepare("SELECT count(*) FROM audit_logs").pluck().get());
    expect(stored).toBe(sim.control.size());
    expect(await audited(url)).toBe(stored);

    const [last] = await queryOnce<{ value: string }>(
      url,
      "SELECT value FROM meta WHERE key = 'daemon.last_cycle'",
    );
    expect(JSON.parse(last!.value)).toMatchObject({ ok: true, outcome: "ok", report: { from, to } });
    const status = await runCliInProcess(["status", "--db", url]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain("Daemon's last cycle:");
    expect(status.stdout).toContain(`ok, report ${from} .. ${to}`);
    expect(status.stdout).not.toContain(new URL(url).password);
  });
});

describe("flagtrail demo --db postgres://…", () => {
  it("backfills, writes the reports, re-runs incrementally, verifies, and never prints the password", async () => {
    const url = await freshDatabase("demo");
    const password = new URL(url).password;
    expect(password.length).toBeGreaterThan(8);
    const dir = mkdtempSync(join(tmpdir(), "flagtrail-pg-demo-"));
    const out = join(dir, "reports");
    const args = ["demo", "--db", url, "--out", out, "--records", "1000", "--days", "120"];

    const first = await runCliInProcess(args);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("First run: backfilling the whole history.");
    expect(first.stdout).toContain(`records stored in ${maskUrl(url)}.`);
    expect(first.stdout).toContain(
      `with FLAGTRAIL_DB set to '${maskUrl(url)}' (its password in place of ***):`,
    );
    expect(first.stdout).toMatch(/flagtrail(\.js)? sql "SELECT/);
    expect(first.stdout).toContain("Run the same command again to see an incremental sync.");
    const [stored] = await queryOnce<{ n: number }>(url, "SELECT count(*)::int AS n FROM audit_logs");
    expect(stored!.n).toBeGreaterThanOrEqual(1000);

    const manifestPath = first.stdout.match(/\S*manifest_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.json/)?.[0];
    expect(manifestPath).toBeDefined();
    const manifest = JSON.parse(readFileSync(resolve(manifestPath!), "utf8")) as {
      files: { name: string; sha256: string }[];
    };
    expect(manifest.files.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^compliance_.*\.md$/),
        expect.stringMatching(/^config-edits_.*\.csv$/),
      ]),
    );
    for (const file of manifest.files) {
      const bytes = readFileSync(join(out, file.name));
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(file.sha256);
    }

    // The re-run and the check.
    const second = await runCliInProcess(args);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("Incremental sync");
    const requests = (text: string) => Number(text.match(/requests (\d+)/)?.[1]);
    expect(requests(second.stdout)).toBeLessThan(requests(first.stdout) / 4);
    const [revisions] = await queryOnce<{ n: number }>(
      url,
      "SELECT count(*)::int AS n FROM audit_log_revisions",
    );
    expect(revisions!.n).toBe(0);
    const verify = await runCliInProcess(["verify", "--db", url]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);

    for (const run of [first, second, verify]) {
      expect(run.stdout + run.stderr).not.toContain(password);
    }
  });
});
