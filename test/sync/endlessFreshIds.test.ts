// Issue 27 defect 4: a server whose pages keep bringing fresh ids, its totalItems growing with every
// page, made one sync store 898,000 made-up records that verify then called OK. The read is bounded by
// the total its first page reported (plus a margin for records added at the head meanwhile): the sync
// stops with exit 1 and one sentence, stores none of the made-up records, verify stays OK, and the
// records it left unread arrive with the next sync once the server behaves. The sync that stops is
// spawned (end to end); the CLI's other runs are in this process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDLESS_ID_PREFIX } from "../../src/simulator/auditRoute.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath, withDb } from "../helpers/simSync.ts";

let sim: RunningSimulator;
let db: string;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startTestSimulator({ records: 300, days: 20 });
  db = tempDbPath("flagtrail-endless-");
  env = simEnv(sim, db);
  const first = await runCliInProcess(["sync", "--since", daysAgo(22), "--no-entities", "--quiet"], { env });
  expect(first.code, first.stderr).toBe(0);
});
afterAll(async () => {
  await sim?.close();
});

const count = (sql: string, ...params: unknown[]) =>
  withDb(db, (sqlite) =>
    Number(
      sqlite
        .prepare(sql)
        .pluck()
        .get(...params),
    ),
  );

describe("a server serving endless fresh ids with a growing totalItems", () => {
  it("stops the sync with one sentence and stores none of its made-up records; verify stays OK", async () => {
    const fresh = sim.control.insertAtHead(120);
    const before = count("SELECT count(*) FROM audit_logs");
    sim.control.setFaults({ endlessFreshIds: true });
    const requestsBefore = sim.control.counters().requests;
    const run = await runCli(["sync", "--page-size", "50", "--no-entities", "--quiet"], {
      env,
      timeoutMs: 60_000,
    });
    const served = sim.control.counters().faults.endlessFreshIds;
    sim.control.setFaults({});
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(
      /^flagtrail: The server kept sending records past the \d+ it counted for .* when the read began/,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(served).toBeGreaterThan(0);
    // Bounded: a handful of pages, not hundreds of thousands of records.
    const requests =
      Object.values(sim.control.counters().requests).reduce((a, b) => a + b, 0) -
      Object.values(requestsBefore).reduce((a, b) => a + b, 0);
    expect(requests).toBeLessThan(30);
    const like = `${ENDLESS_ID_PREFIX}%`;
    expect(count("SELECT count(*) FROM audit_logs WHERE id LIKE ?", like)).toBe(0);
    expect(count("SELECT count(*) FROM quarantine WHERE record_id LIKE ?", like)).toBe(0);
    expect(count("SELECT count(*) FROM audit_logs")).toBeLessThanOrEqual(before + fresh.length);
    const verify = await runCliInProcess(["verify", "--db", db]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/^OK: hash chain of \d+ records intact/);

    // The server behaves again: the next sync brings every record it left unread, and nothing else.
    const again = await runCliInProcess(["sync", "--no-entities", "--quiet"], { env });
    expect(again.code, again.stderr).toBe(0);
    const stored = new Set(withDb(db, (sqlite) => sqlite.prepare("SELECT id FROM audit_logs").pluck().all()));
    expect(fresh.filter((r) => !stored.has(r.id))).toEqual([]);
    expect(count("SELECT count(*) FROM audit_logs")).toBe(before + fresh.length);
  });
});
