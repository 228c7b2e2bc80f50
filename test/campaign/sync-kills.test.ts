// Campaign (issue 13), part 1: kill -9 of the real `flagtrail sync` at random moments across a
// backfill with latency and head inserts, then one resume: exact set equality, integrity_check ok,
// verify ok. CAMPAIGN_SCALE=full: ≥ 50 kills over 25k records; otherwise a few kills.
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator, withDb } from "../helpers/simSync.ts";
import {
  assertSoundSubset,
  assertVerifyOk,
  type FigureRow,
  integrity,
  lastRunRetries,
  random,
  requestsMade,
  runAndKill,
  SCALE,
  SEED,
  SIZES,
  setEquality,
  TIMEOUT,
  writeFigures,
} from "./lib.ts";

const startSim = useTestSimulator();

/** Records stored so far (0 before the store exists or is migrated). */
function storedCount(db: string): number {
  try {
    return withDb(db, (d) => d.prepare("SELECT count(*) FROM audit_logs").pluck().get() as number);
  } catch {
    return 0;
  }
}
const rows: FigureRow[] = [];
afterAll(() => writeFigures("1-sync-kills", rows));

describe(`campaign (${SCALE}): kill -9 of sync`, () => {
  it(
    "survives kill -9 at random moments across a backfill with latency and head inserts, then resumes",
    async () => {
      const sim = await startSim({
        seed: SEED,
        records: SIZES.records,
        days: SIZES.days,
        faults: { latencyMs: 10, jitterMs: 20, headInsertRate: 0.05, headInsertCount: 5 },
      });
      const db = tempDbPath("flagtrail-campaign-");
      const env = simEnv(sim, db);
      const args = ["sync", "--since", daysAgo(SIZES.days + 2)];
      let kills = 0;
      let runs = 0;
      const storedAtKill: number[] = [];
      // Kill moments spread over the whole backfill: the i-th kill waits for a random share of
      // the records (sorted, so the store grows from kill to kill) to be stored.
      const targets = Array.from({ length: SIZES.syncKills }, () => random.next() * SIZES.records).sort(
        (a, b) => a - b,
      );
      while (kills < SIZES.syncKills && runs < SIZES.syncKills * 2) {
        runs++;
        const before = requestsMade(sim);
        const target = targets[kills]!;
        // One kill in five lands anywhere from the spawn (start-up, migrations, planning); the
        // others once this process has made a request and the store holds the kill's share.
        const early = random.next() < 0.2;
        const delay = early ? random.int(0, 1500) : random.int(0, 300);
        const armed = early ? () => true : () => requestsMade(sim) > before && storedCount(db) >= target;
        const result = await runAndKill([...args, "--quiet"], env, delay, armed);
        if (result.killed) kills++;
        else expect(result.code, result.stderr).toBe(0);
        storedAtKill.push(assertSoundSubset(sim, db));
      }
      expect(kills).toBe(SIZES.syncKills);

      sim.control.setFaults({});
      const before = requestsMade(sim);
      const resumed = await runCli([...args, "--json"], { env, timeoutMs: 600_000 });
      expect(resumed.code, resumed.stderr).toBe(0);
      const equality = setEquality(sim, db);
      expect(equality.equal, JSON.stringify(equality)).toBe(true);
      expect(integrity(db)).toBe("ok");
      await assertVerifyOk(db);
      const summary = JSON.parse(resumed.stdout);
      const retries = lastRunRetries(db);
      if (retries !== "no column") expect(summary.retries).toBe(retries);
      rows.push({
        case: "sync kill -9 + resume",
        outcome: "set equal, integrity ok, verify ok",
        kills,
        runs: runs + 1,
        killsWhileStoreIncomplete: storedAtKill.filter((n) => n < SIZES.records).length,
        storedAtKills: `min ${Math.min(...storedAtKill)}, median ${storedAtKill.sort((a, b) => a - b)[storedAtKill.length >> 1]}, max ${Math.max(...storedAtKill)}`,
        records: sim.control.size(),
        headInserts: sim.control.counters().faults.headInsert,
        requests: requestsMade(sim),
        resumeRequests: requestsMade(sim) - before,
        resumeInserted: summary.inserted,
        retriesColumn: retries,
      });
    },
    TIMEOUT,
  );
});
