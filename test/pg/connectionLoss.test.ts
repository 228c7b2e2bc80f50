// A PostgreSQL store whose server drops the connection mid-run (pg_terminate_backend, a fast restart):
// `sync` ends with one sentence naming the masked URL and exit 1, never node's "Unhandled 'error'
// event" and a stack; a re-run resumes to the same rows as a clean sync. The daemon logs the failed
// cycle and completes the next one. The runs that lose the connection are processes of their own; the
// re-runs and checks after them run the CLI in this process.
import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { type PgStore, pgConnectionOf } from "../../src/store/connection.ts";
import { acquireLease, openStore, releaseLease } from "../../src/store/syncStore.ts";
import { logEvents, spawnDaemon, waitUntil } from "../helpers/daemonProcess.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, useTestSimulator } from "../helpers/simSync.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const startSim = useTestSimulator();

async function count(url: string, sql: string): Promise<number> {
  try {
    const [row] = await queryOnce<{ n: number }>(url, sql);
    return Number(row?.n ?? 0);
  } catch {
    return 0; // tables not created yet
  }
}

/** Ends every other session on the store's database (the CLI's pool and its lease session) but `keep`. */
async function terminateOthers(url: string, keep: number[] = []): Promise<number> {
  // Two statements: the planner may evaluate pg_terminate_backend before the pid filter of one.
  const others = await queryOnce<{ pid: number }>(
    url,
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND NOT pid = ANY($1::int[])",
    [keep],
  );
  for (const { pid } of others) await queryOnce(url, "SELECT pg_terminate_backend($1)", [pid]);
  return others.length;
}

const syncArgs = [
  "sync",
  "--no-entities",
  "--since",
  daysAgo(105),
  "--page-size",
  "20",
  "--concurrency",
  "1",
];

describe("a PostgreSQL connection lost mid-run", () => {
  it("sync: one sentence with the masked URL, exit 1; a re-run resumes to the same rows", async () => {
    const sim = await startSim({ records: 1200, days: 100, faults: { latencyMs: 20 } });
    const url = await freshDatabase("lost");
    const password = new URL(url).password;
    const env = simEnv(sim, url);
    let child: ChildProcess | undefined;
    const run = runCli([...syncArgs, "--quiet"], {
      env,
      onSpawn: (c) => {
        child = c;
      },
    });
    await waitUntil(
      async () => (await count(url, "SELECT count(*) AS n FROM sync_windows WHERE status = 'done'")) >= 1,
      "a window to commit",
    );
    // Idle sessions die quietly (the pool replaces them): the sync's next write is held on a lock, so
    // that ending its sessions ends one under a statement, whatever the machine's speed.
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    let terminated = 0;
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE audit_logs IN ACCESS EXCLUSIVE MODE");
      const lockerPid = (await locker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
      const waiting =
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
      await waitUntil(async () => (await count(url, waiting)) > 0, "the sync's write to wait on the lock");
      terminated = await terminateOthers(url, [lockerPid]);
    } finally {
      await locker.query("ROLLBACK").catch(() => {});
      await locker.end();
    }
    expect(terminated).toBeGreaterThan(0);
    const result = await run;
    expect(child?.exitCode).toBe(1);
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines, result.stderr).toHaveLength(1);
    expect(result.stderr).not.toMatch(/Unhandled|node:events|\n\s+at /);
    expect(result.stderr).toMatch(
      /lost the connection to the PostgreSQL server of postgres:\/\/postgres:\*\*\*@/i,
    );
    expect(result.stderr).not.toContain(password);
    // Where the loss landed varies (a batch, the coverage check): the run is not recorded as ok.
    const outcomes = await queryOnce<{ outcome: string }>(url, "SELECT outcome FROM sync_runs");
    expect(outcomes.map((r) => r.outcome)).not.toContain("ok");

    sim.control.setFaults({});
    const resumed = await runCliInProcess(["sync", "--no-entities", "--json"], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    // The same rows as a clean sync of the same history.
    const clean = await freshDatabase("clean");
    expect((await runCliInProcess([...syncArgs, "--quiet"], { env: simEnv(sim, clean) })).code).toBe(0);
    const total = "SELECT (SELECT count(*) FROM audit_logs) + (SELECT count(*) FROM quarantine) AS n";
    expect(await count(url, total)).toBe(await count(clean, total));
    expect(await count(url, "SELECT count(DISTINCT id) AS n FROM audit_logs")).toBe(
      await count(url, "SELECT count(*) AS n FROM audit_logs"),
    );
    expect((await runCliInProcess(["verify", "--db", url], { env })).code).toBe(0);
  });

  it("daemon: the cycle fails, the daemon keeps running and completes the next cycle", async () => {
    const sim = await startSim({ records: 600, days: 100, faults: { latencyMs: 60 } });
    const url = await freshDatabase("lost_daemon");
    const env = simEnv(sim, url);
    const daemon = spawnDaemon(["--cron", "* * * * * *", ...syncArgs.slice(2)], env);
    await waitUntil(async () => (await count(url, "SELECT count(*) AS n FROM audit_logs")) > 0, "first rows");
    const events = () => logEvents(daemon.stderrSoFar());
    let terminated = 0;
    while (!events().some((e) => e.event === "cycle.failed") && daemon.child().exitCode === null) {
      terminated += await terminateOthers(url);
    }
    expect(terminated).toBeGreaterThan(0);
    // The loss has failed a cycle: the next one, which must complete, needs no latency.
    sim.control.setFaults({});
    expect(daemon.child().exitCode, daemon.stderrSoFar()).toBeNull();
    const failedAt = events().findIndex((e) => e.event === "cycle.failed");
    await waitUntil(
      () => events().some((e, i) => i > failedAt && e.event === "cycle.end"),
      "a next cycle to complete",
    );
    daemon.child().kill("SIGTERM");
    const result = await daemon.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/Unhandled|node:events/);
    const failed = events().find((e) => e.event === "cycle.failed");
    expect(String(failed?.error)).toMatch(/lost the connection to the PostgreSQL server/i);
    expect(await count(url, "SELECT count(*) AS n FROM audit_logs")).toBeGreaterThan(0);
    expect((await runCliInProcess(["verify", "--db", url], { env })).code).toBe(0);
  });

  it("a lease whose session the server ended is released quietly: its lock went with the session", async () => {
    // The race a sync's finally meets: the server ended the lease's session, the driver has not said so
    // yet, and the unlock's query fails. A raw driver error there replaced the sync's own sentence.
    const url = await freshDatabase("lostlease");
    const store = await openStore(url);
    try {
      await acquireLease(store, "sync", "holder-1", 60_000);
      const held = pgConnectionOf(store as PgStore).leases.get("sync")!;
      const ended = Object.assign(new Error("terminating connection due to administrator command"), {
        code: "57P01",
      });
      const query = held.client.query.bind(held.client);
      held.client.query = (async () => {
        await query("SELECT pg_terminate_backend(pg_backend_pid())").catch(() => {});
        throw ended;
      }) as never;
      await expect(releaseLease(store, "sync", "holder-1")).resolves.toBe(true);
      // Taken again at once: the server freed the lock with the session.
      await acquireLease(store, "sync", "holder-2", 60_000);
      expect(await releaseLease(store, "sync", "holder-2")).toBe(true);
    } finally {
      await store.close();
    }
  });
});
