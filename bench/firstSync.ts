// A first sync's requests and its wall time at the documented rate limits (issue 25), before (no entity
// budget, the whole limits) and after (the default entity budget, the default rate share) in the same
// run. The requests are counted against the simulator with no rate limit; the wall time is what those
// requests cost at the limits, computed on a fake clock through the client's own RateBudget (36 minutes
// of waiting are not waited), assuming answers take no time.
import { DEFAULT_RATE_LIMITS, RateBudget, type RateWindow, sharedLimits } from "../src/api/rateBudget.ts";
import { addDays } from "../src/sync/days.ts";
import { SYNC_DEFAULTS } from "../src/sync/defaults.ts";
import { runSync } from "../src/sync/runSync.ts";
import { type SimProcess, startSimProcess } from "./simProcess.ts";
import { tempStore } from "./writeRecords.ts";

/** Seconds until `requests` requests have all started, at `limits`, with no other client. */
export async function secondsAtLimits(requests: number, limits: readonly RateWindow[]): Promise<number> {
  let now = 0;
  const clock = {
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
  };
  const budget = new RateBudget({ limits, clock });
  for (let i = 0; i < requests; i += 1) await budget.acquire();
  return now / 1000;
}

interface FirstSync {
  requests: number;
  entityRequests: number;
  pending: number;
}

async function firstSync(
  sim: SimProcess,
  clientFor: (sim: SimProcess) => Parameters<typeof runSync>[1],
  range: { since: string; until: string; now: number },
  entityBudget: number | undefined,
): Promise<FirstSync> {
  const client = clientFor(sim);
  const temp = tempStore("first-sync");
  try {
    const summary = await runSync(temp.store, client, {
      since: range.since,
      until: range.until,
      now: () => range.now,
      ...(entityBudget === undefined ? {} : { entityBudget }),
    });
    return {
      requests: summary.requests,
      entityRequests: summary.entities?.requests ?? 0,
      pending: summary.entities?.pending ?? 0,
    };
  } finally {
    temp.done();
    await (client as { close(): Promise<void> }).close();
  }
}

/** Figures for a first sync of `records` records over 60 days: before and after, requests and seconds. */
export async function firstSyncFigures(
  records: number,
  simFlags: (records: number, days: number) => string[],
  clientFor: (sim: SimProcess) => Parameters<typeof runSync>[1],
  range: { today: string; until: string; now: number },
): Promise<Record<string, number>> {
  const sim = await startSimProcess(simFlags(records, 60));
  const span = { since: addDays(range.today, -62), until: range.until, now: range.now };
  try {
    const before = await firstSync(sim, clientFor, span, Number.MAX_SAFE_INTEGER);
    const after = await firstSync(sim, clientFor, span, undefined);
    const k = `first_sync_${records / 1000}k`;
    return {
      [`${k}_requests_before`]: before.requests,
      [`${k}_entity_requests_before`]: before.entityRequests,
      [`${k}_seconds_at_limits_before`]: Math.round(
        await secondsAtLimits(before.requests, DEFAULT_RATE_LIMITS),
      ),
      [`${k}_requests_after`]: after.requests,
      [`${k}_entity_requests_after`]: after.entityRequests,
      [`${k}_entities_pending_after`]: after.pending,
      [`${k}_seconds_at_limits_after`]: Math.round(
        await secondsAtLimits(after.requests, sharedLimits(DEFAULT_RATE_LIMITS, SYNC_DEFAULTS.rateShare)),
      ),
    };
  } finally {
    await sim.close();
  }
}
