// A held lease's heartbeat, one rule for the sync's lease and the daemon's: renew every third of the TTL;
// a renewal that fails for another reason (SQLITE_BUSY while another command holds the write lock, a
// network blip to PostgreSQL) is tried again at the next beat, since the lease outlives a few missed beats.
// The lease is given up only when it is lost (LockedError: another holder has it, or its session is gone)
// or when the TTL has passed without a successful renewal: another process may take it over from then on.
import { LockedError } from "./errors.ts";

export interface HeartbeatOptions {
  /** Extends the lease; throws LockedError when it was lost. */
  renew: () => Promise<unknown>;
  ttlMs: number;
  /** The clock the lease's expiry is written with. */
  now?: () => number;
  /** A renewal failed but the lease may still be ours: the next beat tries again. */
  onMissed?: (error: unknown) => void;
  /** Called once, when the heartbeat gives the lease up; it has stopped then. */
  onLost: (error: LockedError) => void;
}

/** Starts beating (the timer does not keep the process alive); `stop()` ends it. */
export function startHeartbeat(options: HeartbeatOptions): { stop: () => void } {
  const { renew, ttlMs, now = Date.now, onMissed, onLost } = options;
  let renewedAt = now();
  let stopped = false;
  let renewing = false;
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  const lose = (error: LockedError) => {
    if (stopped) return;
    stop();
    onLost(error);
  };
  const expired = (cause: unknown) =>
    new LockedError(
      `The lease was not renewed for ${Math.round(ttlMs / 1000)} s (its time to live); another process may hold it now.`,
      { cause },
    );
  const beat = async () => {
    // A renewal still under way (on SQLite it waits behind the run's own write) is not doubled.
    if (renewing) return;
    renewing = true;
    try {
      await renew();
      renewedAt = now();
    } catch (error) {
      if (stopped) return;
      if (error instanceof LockedError) lose(error);
      else if (now() - renewedAt >= ttlMs) lose(expired(error));
      else onMissed?.(error);
    } finally {
      renewing = false;
    }
  };
  const timer = setInterval(() => void beat(), Math.max(250, Math.floor(ttlMs / 3)));
  timer.unref();
  return { stop };
}
