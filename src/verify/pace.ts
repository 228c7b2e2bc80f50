// verify's walks are synchronous reads on SQLite (better-sqlite3): without a pause, SIGINT/SIGTERM would
// wait for the whole walk (minutes on a large store) and then still print "OK". A pause every few hundred
// rows lets the process's signal handler (src/cli.ts: exit 1, one sentence) run within milliseconds.
import { setImmediate as nextTurn } from "node:timers/promises";

/** Rows between pauses: a few ms of hashing at most, so the cost of the pauses is lost in the noise. */
const ROWS_PER_PAUSE = 256;

/** A function to await once per row: every ROWS_PER_PAUSE calls it yields to the event loop. */
export function pacer(): () => Promise<void> | undefined {
  let rows = 0;
  return () => {
    rows += 1;
    return rows % ROWS_PER_PAUSE === 0 ? nextTurn().then(() => undefined) : undefined;
  };
}
