// The entity part of a sync, run once after the audit log part: the version history of every dynamic
// config with a config edit stored since its versions were last read (a run without one makes no
// version request), the experiments of the layers whose experiments may have changed, and the metrics
// of the events read before or named by the caller. Same client, so the same rate budget and retry
// rules, and reads `concurrency` at a time like the audit pages (stored in order). At most a budget of
// requests: the most recently edited configs and layers first, then older ones, then events; what is
// left is saved as the backlog, which later runs read first (it stays due). A 404 is recorded and the
// run goes on; the first 403 is reported once and ends the entity reads (the audit records are already
// committed, so the run still succeeds).
//
// The parts: entityDue (what is due, in budget order), entityBudget (pages counted against the budget),
// entityReads (one read), entityStore (its outcome stored), entityPass (reads in flight, writes in order).
import type { ConsoleClient } from "../api/client.ts";
import type { ConsoleApiClient } from "../api/consoleClient.ts";
import { checkEntityChainEnd, rediffConfigsBehind, saveEntityBacklog } from "../store/syncStore.ts";
import { budgetOf } from "./entityBudget.ts";
import { dueKey, dueReads, KINDS } from "./entityDue.ts";
import { EntityPass } from "./entityPass.ts";
import { type EntitySummary, StopEntities, warn } from "./entitySummary.ts";
import type { SyncRun } from "./run.ts";

export type { EntitySummary } from "./entitySummary.ts";

const hasListPage = (client: ConsoleClient): client is ConsoleApiClient =>
  typeof (client as Partial<ConsoleApiClient>).listPage === "function";

export async function syncEntities(run: SyncRun): Promise<EntitySummary | null> {
  const { client, options } = run;
  if (!options.entities || !hasListPage(client) || run.signal.aborted) return null;
  run.refreshClientStats();
  await rediffConfigsBehind(run.store, run.signal);
  const { signingKey: key, previousSigningKey: previousKey } = options;
  // With the key, the chain's end is checked and its head signed even when no entity is due: a store
  // signed before the entity chain was, or in a rotation, then passes verify with the key.
  if (key)
    await checkEntityChainEnd(run.store, {
      now: run.now(),
      signing: { key, previousKey, warn: (m) => warn(run, m) },
    });
  const pass = new EntityPass(run, client, budgetOf(run, run.counters.requests));
  const requestsBefore = client.stats().requests;
  const due = await dueReads(run);
  try {
    await pass.readAll(due);
  } catch (error) {
    if (!(error instanceof StopEntities)) throw error;
  }
  const summary = pass.summary;
  summary.requests = client.stats().requests - requestsBefore;
  const unread = due.filter((entity) => !pass.caughtUp.has(dueKey(entity)));
  summary.pending = unread.length;
  if (!run.signal.aborted) {
    const backlog = unread.map((entity) => ({
      kind: entity.kind,
      key: entity.key,
      newestSeq: entity.newest,
    }));
    await saveEntityBacklog(run.store, KINDS, backlog, { runId: run.runId, now: run.now() });
  }
  run.emit({ type: "entities", pass: "configs", read: summary.configs });
  run.emit({ type: "entities", pass: "layers", read: summary.layers });
  run.emit({ type: "entities", pass: "events", read: summary.events });
  warnMutated(run, summary);
  return summary;
}

/** One warning naming up to five versions that came back with other content under their number. */
function warnMutated(run: SyncRun, summary: EntitySummary): void {
  const mutated = summary.mutatedVersions;
  if (mutated.length === 0) return;
  const named = mutated
    .slice(0, 5)
    .map((m) => `${m.configKey} v${m.version}`)
    .join(", ");
  warn(
    run,
    `${mutated.length} config version(s) came back with other content under the same number (kept as revisions): ${named}${mutated.length > 5 ? ", …" : ""}.`,
  );
}
