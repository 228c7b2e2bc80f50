// One sync in a process of its own, so that its peak RSS is the sync's alone: `node --import tsx
// bench/syncChild.ts URL SINCE UNTIL` prints one JSON line {ms, inserted, requests, rssMb}.
import { createConsoleClient } from "../src/api/consoleClient.ts";
import { keepHeapSmall } from "../src/commands/heap.ts";
import { runSync } from "../src/sync/runSync.ts";
import { SIM_KEY } from "./simProcess.ts";
import { tempStore } from "./writeRecords.ts";

// As `flagtrail sync` runs it.
keepHeapSmall();
const [url, since, until] = process.argv.slice(2);
if (!url || !since || !until) throw new Error("usage: syncChild.ts URL SINCE UNTIL");
const client = createConsoleClient({
  baseUrl: url,
  apiKey: SIM_KEY,
  rateLimits: [{ limit: 1e9, windowMs: 1000 }],
});
const temp = tempStore("sync-child");
try {
  const started = performance.now();
  const summary = await runSync(temp.store, client, { since, until });
  const ms = performance.now() - started;
  process.stdout.write(
    `${JSON.stringify({
      ms,
      inserted: summary.inserted,
      fetched: summary.fetched,
      requests: summary.requests,
      coverageRequests: summary.coverageRequests,
      gaps: summary.coverageGaps.length,
      rssMb: process.resourceUsage().maxRSS / 1024,
    })}\n`,
  );
} finally {
  temp.done();
  await client.close();
}
