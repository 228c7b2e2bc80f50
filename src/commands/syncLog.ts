// The daemon's sync as structured log lines (its log is JSON lines for a journal, not a progress bar):
// syncProgress.ts's counterpart for a worker without a terminal.
import type { RetryEvent } from "../api/clientOptions.ts";
import type { Logger } from "../log.ts";
import type { SyncEvent } from "../sync/runSync.ts";
import { LOG_PROGRESS_SECONDS } from "./syncProgress.ts";

/**
 * A cycle's sync as log events: every window and entity pass, every retry (a 429 as `sync.throttled`),
 * and the progress of the phase under way, at most every FLAGTRAIL_PROGRESS_SECONDS between steps, so
 * a long backfill's log shows where it is and when.
 */
export function syncEventLog(log: Logger, intervalMs = LOG_PROGRESS_SECONDS * 1000) {
  let lastLoggedAt = 0;
  let lastStep = "";
  const onEvent = (event: SyncEvent) => {
    switch (event.type) {
      case "warning":
        return log.warn("sync.warning", { message: event.message });
      case "notice":
        return log.info("sync.notice", { message: event.message });
      case "window":
        return log.info("sync.window", {
          startDate: event.startDate,
          endDate: event.endDate,
          done: event.done,
          total: event.total,
        });
      case "entities":
        return log.info("sync.entities", { pass: event.pass, read: event.read });
      case "progress": {
        const step = `${event.phase} ${event.done}/${event.total}`;
        const now = Date.now();
        // A new step is always logged; the same step again (a page stored) only after the interval.
        if (step === lastStep && now - lastLoggedAt < intervalMs) return;
        lastStep = step;
        lastLoggedAt = now;
        const { type: _type, ...fields } = event;
        return log.info("sync.progress", fields);
      }
    }
  };
  const onRetry = (event: RetryEvent) => {
    const fields = {
      request: `GET ${event.requestPath}`,
      reason: event.reason,
      attempt: event.attempt + 1,
      delayMs: event.delayMs,
    };
    if (event.status === 429) log.warn("sync.throttled", fields);
    else log.warn("sync.retry", fields);
  };
  return { onEvent, onRetry };
}
