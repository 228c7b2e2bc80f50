// `flagtrail status`'s reads on PostgreSQL: the rows src/store/status.ts reads from SQLite, in the same
// order (text keys COLLATE "C", SQLite's byte order; NULLs never sort here). A lease is live when a
// session holds its advisory lock (src/store/pg/leases.ts), not by pid and expiry.
import type pg from "pg";
import { DAEMON_LAST_CYCLE_KEY, DAEMON_LEASE } from "../leases.ts";
import { STATUS_LIMITS, type StatusRows } from "../status.ts";
import { syncPlanSchema } from "../syncPlans.ts";
import { type PgStore, pgConnectionOf } from "./connection.ts";
import { describePgError } from "./errors.ts";
import { readPgLease } from "./leases.ts";

async function rows<T extends pg.QueryResultRow>(pool: pg.Pool, text: string, values: unknown[] = []) {
  return (await pool.query<T>(text, values)).rows;
}

async function leaseOf(store: PgStore, name: string): Promise<StatusRows["lease"]> {
  const found = await readPgLease(store, name);
  if (!found) return undefined;
  const { live, ...lease } = found;
  return { lease, live };
}

async function plansOf(pool: pg.Pool): Promise<StatusRows["plans"]> {
  const values = await rows<{ value: string }>(
    pool,
    `SELECT value FROM meta WHERE key LIKE 'sync\\_plan:%' ESCAPE '\\' ORDER BY key COLLATE "C"`,
  );
  const plans = values
    .map((r) => syncPlanSchema.safeParse(JSON.parse(r.value)))
    .flatMap((parsed) => (parsed.success ? [parsed.data] : []));
  return Promise.all(
    plans.map(async (plan) => ({
      plan,
      windows: await rows<{ status: string }>(pool, "SELECT status FROM sync_windows WHERE filter_key = $1", [
        plan.filterKey,
      ]),
    })),
  );
}

async function readRows(store: PgStore, pool: pg.Pool): Promise<StatusRows> {
  const { runs, listed } = STATUS_LIMITS;
  const day = "filter_key, day, local_count, server_total";
  const [records] = await rows<StatusRows["records"]>(
    pool,
    `SELECT count(*) AS total, min(occurred_at) AS first, max(occurred_at) AS last,
       min(server_day COLLATE "C") AS "firstDay", max(server_day COLLATE "C") AS "lastDay",
       sum(CASE WHEN occurred_at IS NULL THEN 1 ELSE 0 END) AS undated
     FROM audit_logs`,
  );
  const [coverageCounts] = await rows<StatusRows["coverageCounts"]>(
    pool,
    `SELECT count(*) AS checked, sum(CASE WHEN local_count <> server_total THEN 1 ELSE 0 END) AS gaps,
       sum(CASE WHEN day_closed = 0 THEN 1 ELSE 0 END) AS open FROM coverage`,
  );
  const [quarantine] = await rows<{ total: number }>(pool, "SELECT count(*) AS total FROM quarantine");
  const [mutatedCounts] = await rows<StatusRows["mutatedCounts"]>(
    pool,
    "SELECT count(DISTINCT audit_log_id) AS records, count(*) AS revisions FROM audit_log_revisions",
  );
  const checkpoints = await rows<{
    filterKey: string;
    latestId: string;
    latestOccurredAt: number | null;
    updatedAt: number;
  }>(
    pool,
    `SELECT filter_key AS "filterKey", latest_id AS "latestId", latest_occurred_at AS "latestOccurredAt",
       updated_at AS "updatedAt" FROM checkpoints ORDER BY filter_key COLLATE "C"`,
  );
  const [lastCycle] = await rows<{ value: string }>(pool, "SELECT value FROM meta WHERE key = $1", [
    DAEMON_LAST_CYCLE_KEY,
  ]);
  return {
    records: records!,
    head: (
      await rows<{ seq: number; chain_hash: string }>(
        pool,
        "SELECT seq, chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1",
      )
    )[0],
    runs: await rows(
      pool,
      `SELECT id, started_at, finished_at, outcome, filter_key, fetched, inserted, duplicates, mutations,
         quarantined, warnings, requests, throttled, retries, error FROM sync_runs ORDER BY id DESC LIMIT $1`,
      [runs],
    ),
    coverageCounts: coverageCounts!,
    openDays: await rows(
      pool,
      `SELECT ${day} FROM coverage WHERE day_closed = 0
       ORDER BY day COLLATE "C" DESC, filter_key COLLATE "C" LIMIT $1`,
      [listed],
    ),
    gaps: await rows(
      pool,
      `SELECT ${day} FROM coverage WHERE local_count <> server_total
       ORDER BY day COLLATE "C" DESC, filter_key COLLATE "C" LIMIT $1`,
      [listed],
    ),
    quarantineTotal: quarantine?.total ?? 0,
    quarantineRecent: await rows(
      pool,
      "SELECT record_id, received_at, issues FROM quarantine ORDER BY id DESC LIMIT $1",
      [listed],
    ),
    mutatedCounts: mutatedCounts!,
    mutatedRecent: await rows(
      pool,
      `SELECT audit_log_id AS id, count(*) AS revisions FROM audit_log_revisions
       GROUP BY audit_log_id ORDER BY max(id) DESC LIMIT $1`,
      [listed],
    ),
    checkpoints,
    plans: await plansOf(pool),
    lease: await leaseOf(store, "sync"),
    daemonLease: await leaseOf(store, DAEMON_LEASE),
    lastCycle: lastCycle?.value,
  };
}

export async function readPgStatusRows(store: PgStore): Promise<StatusRows> {
  const { pool, url } = pgConnectionOf(store);
  try {
    return await readRows(store, pool);
  } catch (error) {
    throw describePgError(error, url);
  }
}
