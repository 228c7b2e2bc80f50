// Campaign (issue 13), part 2: the fault matrix. One real `flagtrail sync` per fault against a fresh
// simulator, each ending in exact set equality (head inserts: after one more run with faults off),
// with the requests the simulator counted.
import { afterAll, describe, expect, it } from "vitest";
import type { QueuedFault, SimCounters, SimulatorOptions } from "../../src/simulator/index.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, tempDbPath, useTestSimulator } from "../helpers/simSync.ts";
import {
  type FigureRow,
  integrity,
  lastRunRetries,
  requestsMade,
  SCALE,
  SEED,
  SIZES,
  setEquality,
  TIMEOUT,
  writeFigures,
} from "./lib.ts";

const startSim = useTestSimulator();
const rows: FigureRow[] = [];
afterAll(() => writeFigures("2-faults", rows));

interface FaultCase {
  name: string;
  options: SimulatorOptions;
  /** One-shot faults for the first requests (the short run: each fault at least once). */
  queue?: QueuedFault[];
  /** Counter of the simulator that shows the fault fired. */
  fired: (c: SimCounters) => number;
  pageSize?: number;
}

const CASES: FaultCase[] = [
  { name: "5xx 20%", options: { faults: { errorRate: 0.2 } }, fired: (c) => c.faults.serverError },
  {
    name: "429 without Retry-After 20%",
    options: { faults: { throttleRate: 0.2 } },
    fired: (c) => c.throttled,
  },
  { name: "connection resets 10%", options: { faults: { resetRate: 0.1 } }, fired: (c) => c.faults.reset },
  {
    name: "truncated bodies 10%",
    options: { faults: { truncateRate: 0.1 } },
    fired: (c) => c.faults.truncate,
  },
  {
    name: "slow (150 ms + 0-100 ms)",
    options: { faults: { latencyMs: 150, jitterMs: 100 } },
    fired: (c) => Object.values(c.requests).reduce((a, b) => a + b, 0),
  },
  { name: "undeclared clamp to 37", options: { maxPageSize: 37 }, fired: (c) => c.faults.clamp },
  {
    name: "declared maximum 250, page size 1000",
    options: { maxLimit: 250 },
    pageSize: 1000,
    fired: (c) => c.lastQueries.filter((q) => q.includes("limit=1000")).length,
  },
  {
    name: "head inserts 30%",
    options: { faults: { headInsertRate: 0.3, headInsertCount: 3 } },
    fired: (c) => c.faults.headInsert,
  },
];

/** `npm test`: every fault once in one run (queued, so each fires whatever the request count). */
const SHORT_CASE: FaultCase = {
  name: "each fault once (5xx, 429 without Retry-After, reset, truncation, slow, clamp, head inserts)",
  options: {
    maxPageSize: 37,
    faults: {
      // A rate limit that never fills, only so that the queued 429 comes without Retry-After.
      rateLimit: { windows: [{ limit: 1_000_000, windowMs: 1000 }], retryAfter: false },
      latencyMs: 40,
      headInsertRate: 0.5,
    },
  },
  queue: ["serverError", "rateLimit", "reset", "truncate"],
  fired: (c) =>
    Math.min(
      c.faults.serverError,
      c.throttled,
      c.faults.reset,
      c.faults.truncate,
      c.faults.clamp,
      c.faults.headInsert,
    ),
};

describe(`campaign (${SCALE}): fault matrix`, () => {
  for (const fault of SCALE === "full" ? CASES : [SHORT_CASE]) {
    it(
      `ends in exact set equality under ${fault.name}`,
      async () => {
        const sim = await startSim({
          seed: SEED,
          records: SIZES.faultRecords,
          days: SIZES.faultDays,
          ...fault.options,
        });
        const db = tempDbPath("flagtrail-campaign-");
        const env = simEnv(sim, db);
        if (fault.queue !== undefined) sim.control.queueFaults(fault.queue);
        const args = [
          "sync",
          "--since",
          daysAgo(SIZES.faultDays + 2),
          "--page-size",
          String(fault.pageSize ?? 100),
          "--json",
        ];
        const run = await runCli(args, { env, timeoutMs: 600_000 });
        expect(run.code, run.stderr).toBe(0);
        const counters = sim.control.counters();
        expect(fault.fired(counters)).toBeGreaterThan(0);
        const summary = JSON.parse(run.stdout);
        let extraRuns = 0;
        if (counters.faults.headInsert > 0) {
          // Records inserted after the newest window was read arrive with the next run.
          sim.control.setFaults({});
          const again = await runCli(args, { env });
          expect(again.code, again.stderr).toBe(0);
          extraRuns++;
        }
        const equality = setEquality(sim, db);
        expect(equality.equal, JSON.stringify(equality)).toBe(true);
        expect(integrity(db)).toBe("ok");
        rows.push({
          case: `fault: ${fault.name}`,
          outcome: "set equal",
          records: sim.control.size(),
          requests: requestsMade(sim),
          statuses: counters.statuses,
          fired: fault.fired(counters),
          summaryRequests: summary.requests,
          duplicates: summary.duplicates,
          extraRuns,
          retries: lastRunRetries(db),
        });
      },
      TIMEOUT,
    );
  }
});
