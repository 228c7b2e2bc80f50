// The rows behind `flagtrail status` (src/commands/storeStatus.ts makes the status of them).
import { listCheckpointsIn } from "./checkpoints.ts";
import { ENTITY_BACKLOG_SQL, type EntityBacklogRow } from "./entityBacklog.ts";
import { DAEMON_LAST_CYCLE_KEY, readLiveLeases } from "./leases.ts";
import { readMetaValue } from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { type Queries, queriesOf, type SQL, sql } from "./query.ts";
import { readStoredPlans, readStoredWindows, type SyncPlan, type SyncWindow } from "./syncPlans.ts";
import type { RunCounters } from "./syncRuns.ts";

const RECENT_RUNS = 10;
const LISTED = 50;

type RunRow = RunCounters & {
  id: number;
  started_at: number;
  finished_at: number | null;
  outcome: string;
  filter_key: string;
  error: string | null;
};

export type DayRow = { filter_key: string; day: string; local_count: number; server_total: number };

/** The newest coverage days `where` holds. */
const coverageDays = (q: Queries, where: SQL) =>
  q.all<DayRow>(
    sql`SELECT filter_key, day, local_count, server_total FROM coverage WHERE ${where}
      ORDER BY day COLLATE "binary" DESC, filter_key COLLATE "binary" LIMIT ${LISTED}`,
  );

/** Interrupted runs' plans (by filter key, byte order) and their windows' progress. */
async function plansOf(store: AnyStore) {
  const plansWithWindows: { plan: SyncPlan; windows: SyncWindow[] }[] = [];
  for (const plan of await readStoredPlans(store))
    plansWithWindows.push({ plan, windows: await readStoredWindows(store, plan.filterKey) });
  return plansWithWindows;
}

export type StatusRows = Awaited<ReturnType<typeof readStatusRows>>;

export async function readStatusRows(store: AnyStore) {
  const q = await queriesOf(store);
  // One row each, present even on an empty store.
  const records = await q.get<{
    total: number;
    first: number | null;
    last: number | null;
    firstDay: string | null;
    lastDay: string | null;
    undated: number | null;
  }>(
    sql`SELECT count(*) AS total, min(occurred_at) AS first, max(occurred_at) AS last,
      min(server_day COLLATE "binary") AS "firstDay", max(server_day COLLATE "binary") AS "lastDay",
      sum(CASE WHEN occurred_at IS NULL THEN 1 ELSE 0 END) AS undated
    FROM audit_logs`,
  );
  const coverageCounts = await q.get<{ checked: number; gaps: number | null; open: number | null }>(
    sql`SELECT count(*) AS checked, sum(CASE WHEN local_count <> server_total THEN 1 ELSE 0 END) AS gaps,
      sum(CASE WHEN day_closed = 0 THEN 1 ELSE 0 END) AS open FROM coverage`,
  );
  const quarantine = await q.get<{ total: number }>(sql`SELECT count(*) AS total FROM quarantine`);
  const mutatedCounts = await q.get<{ records: number; revisions: number }>(
    sql`SELECT count(DISTINCT audit_log_id) AS records, count(*) AS revisions FROM audit_log_revisions`,
  );
  if (!records || !coverageCounts || !mutatedCounts) throw new Error("an aggregate returned no row");
  return {
    records,
    coverageCounts,
    quarantineTotal: quarantine?.total ?? 0,
    mutatedCounts,
    head: await q.get<{ seq: number; chain_hash: string }>(
      sql`SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1`,
    ),
    runs: await q.all<RunRow>(
      sql`SELECT id, started_at, finished_at, outcome, filter_key, fetched, inserted, duplicates, mutations,
        quarantined, warnings, requests, throttled, retries, error FROM sync_runs ORDER BY id DESC LIMIT ${RECENT_RUNS}`,
    ),
    openDays: await coverageDays(q, sql`day_closed = 0`),
    gaps: await coverageDays(q, sql`local_count <> server_total`),
    quarantineRecent: await q.all<{ record_id: string | null; received_at: number; issues: string }>(
      sql`SELECT record_id, received_at, issues FROM quarantine ORDER BY id DESC LIMIT ${LISTED}`,
    ),
    mutatedRecent: await q.all<{ id: string; revisions: number }>(
      sql`SELECT audit_log_id AS id, count(*) AS revisions FROM audit_log_revisions
        GROUP BY audit_log_id ORDER BY max(id) DESC LIMIT ${LISTED}`,
    ),
    entityBacklog: await q.all<EntityBacklogRow>(sql.raw(ENTITY_BACKLOG_SQL)),
    checkpoints: await listCheckpointsIn(q),
    plans: await plansOf(store),
    /** Every lease (sync, daemon, deliveries), with whether its holder is alive (the engine knows how to tell). */
    leases: await readLiveLeases(store),
    lastCycle: await readMetaValue(store, DAEMON_LAST_CYCLE_KEY),
  };
}
