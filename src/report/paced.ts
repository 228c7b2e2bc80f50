// On SQLite a report's reads are synchronous (better-sqlite3) and so are its files' writes (TextFile):
// without a turn of the event loop now and then, SIGINT/SIGTERM (src/cli.ts: exit 1, one sentence; the
// exit listener removes the staging directory) waited for the whole report, ~10 s for 300k records on a
// loaded 2-core machine. A turn at most every TURN_MS between batches and reads lets the signal in.
// `flagtrail check` reads its controls' inputs through the same snapshot, paced the same way.
import { setImmediate as nextTurn } from "node:timers/promises";
import type { ReportSnapshot } from "../store/reportQueries.ts";

/**
 * Time, not rows: a batch's cost varies with its rows' width and the machine's load. A turn costs a few
 * microseconds, so one per 25 ms of work is lost in the noise, and a signal waits at most that long plus
 * one batch (or one SQLite statement, which nothing can cut short).
 */
const TURN_MS = 25;

/** A function to await between pieces of work: it yields to the event loop once TURN_MS have passed. */
function turnTaker(): () => Promise<void> | undefined {
  let last = performance.now();
  return () => {
    const now = performance.now();
    if (now - last < TURN_MS) return undefined;
    return nextTurn().then(() => {
      last = performance.now();
    });
  };
}

async function* paced<Row>(
  batches: AsyncIterable<readonly Row[]>,
  turn: () => Promise<void> | undefined,
): AsyncGenerator<readonly Row[]> {
  for await (const batch of batches) {
    await turn();
    yield batch;
  }
}

/** The snapshot, its reads and batches giving the event loop a turn when TURN_MS have passed. */
export function pacedSnapshot(snapshot: ReportSnapshot): ReportSnapshot {
  const turn = turnTaker();
  return {
    ...snapshot,
    rows: async (name, params) => {
      await turn();
      return snapshot.rows(name, params);
    },
    batches: (name, params) => paced(snapshot.batches(name, params), turn),
    changes: (params) => paced(snapshot.changes(params), turn),
  };
}
