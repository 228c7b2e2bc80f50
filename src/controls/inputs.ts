// What the controls of one project read for a period, all from one report snapshot: the report's own
// queries for the review rules and completeness (one definition of "unreviewed" and of a gap day), the
// period's changes, the last sync. `flagtrail check` and the report's Controls section both read
// through readSnapshotInputs; check adds verify's verdict and whether a sync runs now (its lease).
import { IntegrityError } from "../errors.ts";
import { pacedSnapshot } from "../report/paced.ts";
import type { Period } from "../report/period.ts";
import { approvalPairer, type ReviewPair } from "../report/reviewPairing.ts";
import { REVIEW_EXEMPT_ACTION_TYPES, REVIEW_FLOWS } from "../report/reviews.ts";
import { readCompleteness, unreconciledDays } from "../report/sections/completeness.ts";
import { reportParamsFor, type ServerDays, serverDaysOf } from "../report/serverDays.ts";
import { readLiveLeases } from "../store/leases.ts";
import type { AnyStore } from "../store/openAny.ts";
import {
  type CoverageRow,
  type ReportParams,
  type ReportSnapshot,
  readReportSnapshot,
} from "../store/reportQueries.ts";
import { verifyStore } from "../verify/store.ts";
import type { Control } from "./config.ts";
import type { ControlInputs } from "./evaluate.ts";

/** Review records are the review itself, not a change to review. */
const REVIEW_ACTION_TYPES = new Set<string>([
  ...REVIEW_FLOWS.flatMap((f) => [f.create, f.accept, f.reject, f.delete]),
  ...REVIEW_EXEMPT_ACTION_TYPES.filter((t) => t.startsWith("config_review_")),
]);

const DAY = 86_400_000;

function periodOf(start: number, end: number): Period {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { from: day(start), to: day(end - 1), timeZone: "UTC", start, end, days: [] };
}

/**
 * verify's verdict, with the chain head's signature checked when `signingKey` is given (as verify does
 * with FLAGTRAIL_SIGNING_KEY): without it records cut off the end, meta's head rewritten to match, are a
 * valid shorter chain. The messages name the variable, never its value.
 */
async function verdict(
  store: AnyStore,
  signingKey: string | undefined,
): Promise<ControlInputs["integrityFailure"]> {
  try {
    await verifyStore(store, { signingKey });
    return null;
  } catch (error) {
    if (error instanceof IntegrityError) return { key: error.breakKey, message: error.message };
    throw error;
  }
}

/**
 * Everything but verify's verdict, from one snapshot: `params` the period's (no action-type filter),
 * `now` the time the controls are judged at (a day not over then is not a gap yet), `deferredSince` when
 * the last check ran (check's default period): the emergency changes before the period it left are read.
 * `coverage`: the period's coverage rows when the caller (a report) has read them from this snapshot.
 */
export async function readSnapshotInputs(
  snapshot: ReportSnapshot,
  controls: readonly Control[],
  at: {
    params: ReportParams;
    serverDays: ServerDays | null;
    now: number;
    deferredSince?: number | null;
    coverage?: readonly CoverageRow[] | null;
  },
): Promise<Omit<ControlInputs, "integrityFailure">> {
  const { params, serverDays, now } = at;
  const { start, end } = params;
  // Emergency changes are judged by the approvals that follow them: read that far past the period.
  const after = Math.max(
    0,
    ...controls.map((c) => (c.kind === "change-window" ? c.postReviewDays * DAY : 0)),
  );
  // Only an emergency is ever left for later (./evaluate.ts): without an emergencyPattern, nothing to read.
  const emergencies = controls.some((c) => c.kind === "change-window" && c.emergencyPattern);
  const deferredFrom = at.deferredSince == null || !emergencies ? null : at.deferredSince - after;
  const unreviewed = await snapshot.rows("unreviewed", params);
  const pairs: ReviewPair[] = [];
  const pair = approvalPairer();
  // The approvals after a deferred change too (reviewStart = start - reviewWindow).
  const reviewsFrom = deferredFrom === null ? start : Math.min(start, deferredFrom + params.reviewWindow);
  for await (const batch of snapshot.batches("reviewRecords", {
    ...params,
    start: reviewsFrom,
    end: end + after,
  })) {
    for (const record of batch) {
      const paired = pair(record);
      if (paired) pairs.push(paired);
    }
  }
  const completeness = await readCompleteness({ snapshot, params, serverDays, now, coverage: at.coverage });
  // A day not over (when the sync checked it, or now: today and any later day of a period that runs into
  // the future) is checked again by the next sync: not a gap yet.
  const notYet = new Set([...completeness.open, ...completeness.notOver]);
  const gapDays = serverDays === null ? null : unreconciledDays(completeness).filter((d) => !notYet.has(d));
  const changes = await changesOf(snapshot, params);
  const deferred =
    deferredFrom === null || deferredFrom >= start
      ? undefined
      : {
          since: at.deferredSince!,
          changes: await changesOf(snapshot, { ...params, start: deferredFrom, end: start }),
        };
  const lastSync = (await snapshot.rows("controlLastSync", params))[0]?.at ?? null;
  return { now, start, end, changes, deferred, unreviewed, pairs, gapDays, lastSyncAt: lastSync };
}

/** The changes of [params.start, params.end), without the review records. */
async function changesOf(snapshot: ReportSnapshot, params: ReportParams) {
  const changes = [];
  for await (const batch of snapshot.batches("controlChanges", params))
    for (const change of batch) if (!REVIEW_ACTION_TYPES.has(change.action_type)) changes.push(change);
  return changes;
}

/**
 * `flagtrail check`'s inputs for [start, end) of a store's project; `signingKey` see verdict. Its reads
 * are paced as the report's are (../report/paced.ts): a signal stops check between two batches or reads.
 */
export async function readInputs(
  store: AnyStore,
  controls: readonly Control[],
  range: { start: number; end: number; now: number; deferredSince?: number | null },
  signingKey?: string | undefined,
): Promise<ControlInputs> {
  const { start, end, now, deferredSince } = range;
  const fromSnapshot = await readReportSnapshot(store, async (read) => {
    const snapshot = pacedSnapshot(read);
    const serverDays = await serverDaysOf(snapshot, periodOf(start, end));
    const params = reportParamsFor({ start, end, days: [] }, null, serverDays);
    return readSnapshotInputs(snapshot, controls, { params, serverDays, now, deferredSince });
  });
  return {
    ...fromSnapshot,
    syncRunningSince: controls.some((c) => c.kind === "sync-freshness")
      ? await syncRunningSince(store)
      : null,
    integrityFailure: controls.some((c) => c.kind === "integrity") ? await verdict(store, signingKey) : null,
  };
}

/** When the sync holding the store's live `sync` lease began (src/sync/runSync.ts), or null: none runs. */
async function syncRunningSince(store: AnyStore): Promise<number | null> {
  // A holder that died (kill -9) runs nothing: its row stays until the next sync takes the lease over.
  const held = (await readLiveLeases(store)).find((l) => l.lease.name === "sync" && l.live);
  return held === undefined ? null : Number(held.lease.acquiredAt);
}
