// The read side behind `flagtrail status`: what the store holds and how complete it is. One query text
// reads the same rows (StatusRows) from either engine; one function makes the status of them
// (src/commands/statusText.ts prints it).

import { z } from "zod";
import { type Checkpoint, listCheckpointsIn } from "./checkpoints.ts";
import { ENTITY_BACKLOG_SQL, type EntityBacklogRow } from "./entityBacklog.ts";
import { DAEMON_LAST_CYCLE_KEY, DAEMON_LEASE, type Lease, readLiveLease } from "./leases.ts";
import { readMetaValue, readMetaValuesWithPrefix } from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { type Queries, queriesOf, sql } from "./query.ts";
import { planKey, type SyncPlan, syncPlanSchema } from "./syncPlans.ts";
import type { RunCounters } from "./syncRuns.ts";

const RECENT_RUNS = 10;
const LISTED = 50;

export interface StoreStatus {
  database: string;
  records: {
    total: number;
    firstOccurredAt: string | null;
    lastOccurredAt: string | null;
    firstServerDay: string | null;
    lastServerDay: string | null;
    /** Records whose date/time could not be parsed (occurred_at NULL). */
    undated: number;
  };
  chainHead: { seq: number; hash: string | null };
  checkpoints: { filterKey: string; latestId: string; latestOccurredAt: string | null; updatedAt: string }[];
  /** Plans of interrupted runs that the next sync of that filter set resumes. */
  pending: { filterKey: string; since: string; until: string; windowsDone: number; windowsTotal: number }[];
  runningLease: { holder: string; pid: number; since: string; expiresAt: string } | null;
  /** A live `flagtrail daemon` on this database, and the outcome of its last cycle (sync + report). */
  daemon: {
    lease: { holder: string; pid: number; expiresAt: string } | null;
    lastCycle: Record<string, unknown> | null;
  };
  runs: (RunCounters & {
    id: number;
    startedAt: string;
    finishedAt: string | null;
    outcome: string;
    filterKey: string;
    error: string | null;
  })[];
  coverage: {
    daysChecked: number;
    daysWithGaps: number;
    gaps: { filterKey: string; day: string; local: number; server: number }[];
    /** Days checked before the server's day ended: not final, the next sync checks them again. */
    daysOpen: number;
    open: { filterKey: string; day: string; local: number; server: number }[];
  };
  quarantined: { total: number; recent: { recordId: string | null; receivedAt: string; issue: string }[] };
  mutated: { records: number; revisions: number; recent: { id: string; revisions: number }[] };
  /** Per kind of entity read, as of the last entity pass: entities known, and how many are pending. */
  entityHistory: EntityBacklogRow[];
}

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

function firstIssue(issuesJson: string): string {
  try {
    const issues = JSON.parse(issuesJson) as { path?: string[]; message?: string }[];
    const first = issues[0];
    if (!first) return "";
    const where = first.path && first.path.length > 0 ? `${first.path.join(".")}: ` : "";
    return `${where}${first.message ?? ""}${issues.length > 1 ? ` (+${issues.length - 1} more)` : ""}`;
  } catch {
    return issuesJson;
  }
}

type RunRow = RunCounters & {
  id: number;
  started_at: number;
  finished_at: number | null;
  outcome: string;
  filter_key: string;
  error: string | null;
};

type DayRow = { filter_key: string; day: string; local_count: number; server_total: number };

/** What status reads, from either engine. */
interface StatusRows {
  records: {
    total: number;
    first: number | null;
    last: number | null;
    firstDay: string | null;
    lastDay: string | null;
    undated: number | null;
  };
  head: { seq: number; chain_hash: string } | undefined;
  runs: RunRow[];
  coverageCounts: { checked: number; gaps: number | null; open: number | null };
  openDays: DayRow[];
  gaps: DayRow[];
  quarantineTotal: number;
  quarantineRecent: { record_id: string | null; received_at: number; issues: string }[];
  mutatedCounts: { records: number; revisions: number };
  mutatedRecent: { id: string; revisions: number }[];
  entityBacklog: EntityBacklogRow[];
  checkpoints: Pick<Checkpoint, "filterKey" | "latestId" | "latestOccurredAt" | "updatedAt">[];
  plans: { plan: SyncPlan; windows: { status: string }[] }[];
  /** Each lease, with whether its holder is alive (the engine knows how to tell). */
  lease: { lease: Lease; live: boolean } | undefined;
  daemonLease: { lease: Lease; live: boolean } | undefined;
  /** meta's DAEMON_LAST_CYCLE_KEY value, as stored. */
  lastCycle: string | undefined;
}

const DAY_COLUMNS = sql`filter_key, day, local_count, server_total`;

/** Interrupted runs' plans (by filter key, byte order) and their windows' progress. */
async function plansOf(store: AnyStore, q: Queries): Promise<StatusRows["plans"]> {
  const values = await readMetaValuesWithPrefix(store, planKey(""));
  const plans = [...values.values()]
    .map((value) => syncPlanSchema.safeParse(JSON.parse(value)))
    .flatMap((parsed) => (parsed.success ? [parsed.data] : []));
  const plansWithWindows: StatusRows["plans"] = [];
  for (const plan of plans) {
    const windows = await q.all<{ status: string }>(
      sql`SELECT status FROM sync_windows WHERE filter_key = ${plan.filterKey}`,
    );
    plansWithWindows.push({ plan, windows });
  }
  return plansWithWindows;
}

/** Status's counts: one row each, present even on an empty store. */
async function countsOf(q: Queries) {
  const [records, coverageCounts, quarantine, mutatedCounts] = [
    await q.get<StatusRows["records"]>(
      sql`SELECT count(*) AS total, min(occurred_at) AS first, max(occurred_at) AS last,
        min(server_day COLLATE "binary") AS "firstDay", max(server_day COLLATE "binary") AS "lastDay",
        sum(CASE WHEN occurred_at IS NULL THEN 1 ELSE 0 END) AS undated
      FROM audit_logs`,
    ),
    await q.get<StatusRows["coverageCounts"]>(
      sql`SELECT count(*) AS checked, sum(CASE WHEN local_count <> server_total THEN 1 ELSE 0 END) AS gaps,
        sum(CASE WHEN day_closed = 0 THEN 1 ELSE 0 END) AS open FROM coverage`,
    ),
    await q.get<{ total: number }>(sql`SELECT count(*) AS total FROM quarantine`),
    await q.get<StatusRows["mutatedCounts"]>(
      sql`SELECT count(DISTINCT audit_log_id) AS records, count(*) AS revisions FROM audit_log_revisions`,
    ),
  ];
  if (!records || !coverageCounts || !mutatedCounts) throw new Error("an aggregate returned no row");
  return { records, coverageCounts, quarantineTotal: quarantine?.total ?? 0, mutatedCounts };
}

/** What status reads, one query text for both engines (src/store/query.ts). */
async function readStatusRows(store: AnyStore): Promise<StatusRows> {
  const q = await queriesOf(store);
  return {
    ...(await countsOf(q)),
    head: await q.get(sql`SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1`),
    runs: await q.all<RunRow>(
      sql`SELECT id, started_at, finished_at, outcome, filter_key, fetched, inserted, duplicates, mutations,
        quarantined, warnings, requests, throttled, retries, error FROM sync_runs ORDER BY id DESC LIMIT ${RECENT_RUNS}`,
    ),
    openDays: await q.all<DayRow>(
      sql`SELECT ${DAY_COLUMNS} FROM coverage WHERE day_closed = 0
        ORDER BY day COLLATE "binary" DESC, filter_key COLLATE "binary" LIMIT ${LISTED}`,
    ),
    gaps: await q.all<DayRow>(
      sql`SELECT ${DAY_COLUMNS} FROM coverage WHERE local_count <> server_total
        ORDER BY day COLLATE "binary" DESC, filter_key COLLATE "binary" LIMIT ${LISTED}`,
    ),
    quarantineRecent: await q.all(
      sql`SELECT record_id, received_at, issues FROM quarantine ORDER BY id DESC LIMIT ${LISTED}`,
    ),
    mutatedRecent: await q.all(
      sql`SELECT audit_log_id AS id, count(*) AS revisions FROM audit_log_revisions
        GROUP BY audit_log_id ORDER BY max(id) DESC LIMIT ${LISTED}`,
    ),
    entityBacklog: await q.all<EntityBacklogRow>(sql.raw(ENTITY_BACKLOG_SQL)),
    checkpoints: await listCheckpointsIn(q),
    plans: await plansOf(store, q),
    lease: await readLiveLease(store, "sync"),
    daemonLease: await readLiveLease(store, DAEMON_LEASE),
    lastCycle: await readMetaValue(store, DAEMON_LAST_CYCLE_KEY),
  };
}

/** What the store holds, read from either engine. */
export async function readStatus(store: AnyStore): Promise<StoreStatus> {
  return statusOf(store.location, await readStatusRows(store));
}

function statusOf(database: string, rows: StatusRows): StoreStatus {
  const { records, head, runs, coverageCounts, openDays, gaps } = rows;
  const lease = rows.lease?.live ? rows.lease.lease : undefined; // a holder that died (kill -9) is not "running"
  const daemonLease = rows.daemonLease?.live ? rows.daemonLease.lease : undefined;
  return {
    database,
    records: {
      total: records.total,
      firstOccurredAt: iso(records.first),
      lastOccurredAt: iso(records.last),
      firstServerDay: records.firstDay,
      lastServerDay: records.lastDay,
      undated: records.undated ?? 0,
    },
    chainHead: { seq: head?.seq ?? 0, hash: head?.chain_hash ?? null },
    checkpoints: rows.checkpoints.map((c) => ({
      filterKey: c.filterKey,
      latestId: c.latestId,
      latestOccurredAt: iso(c.latestOccurredAt),
      updatedAt: iso(c.updatedAt) ?? "",
    })),
    pending: rows.plans.map(({ plan, windows }) => ({
      filterKey: plan.filterKey,
      since: plan.since,
      until: plan.until,
      windowsDone: windows.filter((w) => w.status === "done").length,
      windowsTotal: windows.length,
    })),
    runningLease: lease
      ? {
          holder: lease.holder,
          pid: lease.pid,
          since: iso(lease.acquiredAt) ?? "",
          expiresAt: iso(lease.expiresAt) ?? "",
        }
      : null,
    daemon: {
      lease: daemonLease
        ? { holder: daemonLease.holder, pid: daemonLease.pid, expiresAt: iso(daemonLease.expiresAt) ?? "" }
        : null,
      lastCycle: parseLastCycle(rows.lastCycle),
    },
    runs: runs.map((r) => ({
      id: r.id,
      startedAt: iso(r.started_at) ?? "",
      finishedAt: iso(r.finished_at),
      outcome: r.outcome,
      filterKey: r.filter_key,
      fetched: r.fetched,
      inserted: r.inserted,
      duplicates: r.duplicates,
      mutations: r.mutations,
      quarantined: r.quarantined,
      warnings: r.warnings,
      requests: r.requests,
      throttled: r.throttled,
      retries: r.retries,
      error: r.error,
    })),
    coverage: {
      daysChecked: coverageCounts.checked,
      daysWithGaps: coverageCounts.gaps ?? 0,
      gaps: gaps.map(dayOf),
      daysOpen: coverageCounts.open ?? 0,
      open: openDays.map(dayOf),
    },
    quarantined: {
      total: rows.quarantineTotal,
      recent: rows.quarantineRecent.map((q) => ({
        recordId: q.record_id,
        receivedAt: iso(q.received_at) ?? "",
        issue: firstIssue(q.issues),
      })),
    },
    mutated: {
      records: rows.mutatedCounts.records,
      revisions: rows.mutatedCounts.revisions,
      recent: rows.mutatedRecent,
    },
    entityHistory: rows.entityBacklog,
  };
}

function dayOf(g: DayRow) {
  return { filterKey: g.filter_key, day: g.day, local: g.local_count, server: g.server_total };
}

const lastCycleSchema = z.record(z.string(), z.unknown());

function parseLastCycle(row: string | undefined): Record<string, unknown> | null {
  if (typeof row !== "string") return null;
  try {
    const parsed = lastCycleSchema.safeParse(JSON.parse(row));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
