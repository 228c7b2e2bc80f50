// How a plan ends: where a finished plan leaves the checkpoint (the latestID of the next incremental
// run), and whether a failed run's plan may be dropped. The sync's rules, run by the store inside the
// transaction that ends the plan (src/store/syncPlans.ts).
import type { Checkpoint, CheckpointRule, StoredHead, SyncPlan, SyncWindow } from "../store/syncStore.ts";

/** No window of the plan was read from (nothing to resume): the plan may be dropped. */
export function planUntouched(windows: readonly SyncWindow[]): boolean {
  return !windows.some((w) => w.status === "done" || w.nextPage > 1);
}

/**
 * Whether a finished plan's newest record may replace the checkpoint. An incremental plan (latestID)
 * only ever sees newer records; an explicit or full range must not move the checkpoint back in time.
 */
function shouldAdvance(plan: SyncPlan, current: Checkpoint | undefined): boolean {
  if (current === undefined || plan.latestId !== null) return true;
  if (current.latestOccurredAt === null) return true;
  return plan.headOccurredAt !== null && plan.headOccurredAt >= current.latestOccurredAt;
}

/**
 * The checkpoint a finished plan leaves, or undefined to keep the current one. Without a head, the
 * newest window's first page was empty (no activity lately) or all quarantined: the newest record
 * stored for the plan's range is the head, if it is newer than the checkpoint.
 */
export function checkpointRule(plan: SyncPlan): CheckpointRule {
  return async (current, newestStored): Promise<StoredHead | undefined> => {
    if (plan.headId !== null) {
      return shouldAdvance(plan, current) ? { id: plan.headId, occurredAt: plan.headOccurredAt } : undefined;
    }
    const newest = await newestStored();
    if (!newest) return undefined;
    const newer =
      current === undefined ||
      (newest.occurredAt != null &&
        current.latestOccurredAt !== null &&
        newest.occurredAt > current.latestOccurredAt);
    return newer ? newest : undefined;
  };
}
