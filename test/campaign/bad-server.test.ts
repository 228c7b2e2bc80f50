// Campaign (issue 13), part 4: servers no client can page through. After a clean sync and a few new
// records, each mode must end the next sync with exit 1 and one sentence on stderr (no stack
// trace), within a bounded number of requests, losing nothing and leaving the checkpoint where it was.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FaultsInput, RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator, tempDbPath } from "../helpers/simSync.ts";
import {
  checkpoints,
  type FigureRow,
  integrity,
  requestsMade,
  SCALE,
  SEED,
  SIZES,
  stderrShape,
  storedIdSet,
  TIMEOUT,
  writeFigures,
} from "./lib.ts";

const rows: FigureRow[] = [];
/** Requests one failing sync may make before it gives up (issue 13 defect 1 asks for "a few pages"). */
const MAX_REQUESTS = 20;

/**
 * `failsToday` names the defect a mode still meets on main: the full campaign runs it (and fails
 * until it is fixed); the short suite inside `npm test` skips it until then.
 */
const MODES: { mode: string; faults: FaultsInput; failsToday?: string }[] = [
  { mode: "non-JSON 200", faults: { nonJson200Rate: 1 } },
  { mode: "HTML 502 page", faults: { htmlErrorRate: 1 } },
  { mode: "wrong envelope", faults: { wrongEnvelope: true } },
  { mode: "endless 429 without Retry-After", faults: { throttleRate: 1 } },
  { mode: "endless 503", faults: { errorRate: 1, errorStatus: 503 } },
  { mode: "repeating page, totalItems 1e9", faults: { repeatingPage: true } },
];

let sim: RunningSimulator;
let db: string;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startTestSimulator({ seed: SEED, records: SIZES.faultRecords, days: SIZES.faultDays });
  db = tempDbPath("flagtrail-campaign-");
  env = simEnv(sim, db);
  const first = await runCliInProcess(["sync", "--since", daysAgo(SIZES.faultDays + 2), "--quiet"], { env });
  expect(first.code, first.stderr).toBe(0);
}, TIMEOUT);

afterAll(async () => {
  writeFigures("4-bad-server", rows);
  await sim.close();
});

describe(`campaign (${SCALE}): bad servers`, () => {
  // A server that counts more than it serves is not a failure to page: every record it serves is
  // stored (and the checkpoint moves), and coverage reports the shortfall as a gap, at a bounded cost.
  it(
    "stores what a server with a lying totalItems (+500) serves and reports the shortfall as a gap",
    async () => {
      sim.control.setFaults({});
      const fresh = sim.control.insertAtHead(120);
      sim.control.setFaults({ lyingTotal: 500 });
      const before = requestsMade(sim);
      const run = await runCliInProcess(["sync", "--page-size", "50", "--json"], { env });
      const requests = requestsMade(sim) - before;
      sim.control.setFaults({});
      expect(run.code, run.stderr).toBe(0);
      const summary = JSON.parse(run.stdout) as {
        coverageGaps: { day: string; server: number; local: number }[];
      };
      const stored = storedIdSet(db);
      expect(fresh.every((r) => stored.has(r.id))).toBe(true);
      expect(summary.coverageGaps.length).toBeGreaterThan(0);
      expect(summary.coverageGaps.every((g) => g.server - g.local === 500)).toBe(true);
      rows.push({
        case: "bad server: lying totalItems (+500)",
        outcome: "gap reported",
        exitCode: run.code,
        requests,
      });
      expect(requests).toBeLessThanOrEqual(40);
    },
    TIMEOUT,
  );

  for (const { mode, faults, failsToday } of MODES) {
    it.skipIf(SCALE === "short" && failsToday !== undefined)(
      `ends a sync against ${mode} with exit 1, one sentence, nothing lost, checkpoint unchanged`,
      async () => {
        sim.control.setFaults({});
        // Something new to fetch, so that a sync that wrongly succeeds would move the checkpoint.
        sim.control.insertAtHead(120);
        const idsBefore = storedIdSet(db);
        const checkpointBefore = checkpoints(db);
        sim.control.setFaults(faults);
        const before = requestsMade(sim);
        // --quiet: only the error itself on stderr (no "Resuming …" notice of an earlier failed run).
        const run = await runCli(["sync", "--page-size", "50", "--quiet"], { env, timeoutMs: 60_000 });
        const requests = requestsMade(sim) - before;
        sim.control.setFaults({});
        const shape = stderrShape(run.stderr);
        const idsAfter = storedIdSet(db);
        const lost = [...idsBefore].filter((id) => !idsAfter.has(id)).length;
        const checkpointUnchanged = checkpoints(db) === checkpointBefore;
        rows.push({
          case: `bad server: ${mode}`,
          ...(failsToday === undefined ? {} : { knownDefect: failsToday }),
          outcome:
            run.code === 1 && shape.lines === 1 && !shape.stackTrace && requests <= MAX_REQUESTS
              ? "ends as expected"
              : "FAILS",
          exitCode: run.code,
          signal: run.signal,
          stderrFirstLine: shape.firstLine.slice(0, 200),
          stderrLines: shape.lines,
          stackTrace: shape.stackTrace,
          requests,
          lost,
          checkpointUnchanged,
        });
        expect(integrity(db)).toBe("ok");
        expect(lost).toBe(0);
        expect(checkpointUnchanged).toBe(true);
        expect(shape.stackTrace, run.stderr).toBe(false);
        expect(shape.lines, run.stderr).toBe(1);
        expect(run.code, run.stderr).toBe(1);
        expect(requests).toBeLessThanOrEqual(MAX_REQUESTS);
      },
      TIMEOUT,
    );
  }
});
