// The outbox: alerts of new findings still to deliver, one row per sink. A row is marked delivered only
// after the sink accepted it; a failure moves its next attempt later. Never holds a secret.
import { storedReason } from "../../errors.ts";
import type { AnyStore } from "../openAny.ts";
import { queriesOf, sql } from "../query.ts";

export interface OutboxRow {
  finding_id: string;
  sink: string;
  payload: string;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  delivered_at: number | null;
  last_error: string | null;
}

/**
 * Undelivered rows whose next attempt is due at `now` (only `sink`'s when given), oldest first, then in
 * byte order of finding and sink on both engines (PostgreSQL's default collation would order "h…" before
 * "I…", SQLite does not).
 */
export async function dueAlerts(store: AnyStore, now: number, sink?: string): Promise<OutboxRow[]> {
  const q = await queriesOf(store);
  return q.all<OutboxRow>(sql`
    SELECT * FROM control_outbox WHERE delivered_at IS NULL AND next_attempt_at <= ${now}
      ${sink === undefined ? sql`` : sql`AND sink = ${sink}`}
    ORDER BY created_at, finding_id COLLATE "binary", sink COLLATE "binary"`);
}

/** The sinks that have an undelivered row due at `now` (their names only, not the payloads). */
export async function sinksWithDueAlerts(store: AnyStore, now: number): Promise<Set<string>> {
  const q = await queriesOf(store);
  const rows = await q.all<{ sink: string }>(sql`
    SELECT DISTINCT sink FROM control_outbox WHERE delivered_at IS NULL AND next_attempt_at <= ${now}`);
  return new Set(rows.map((r) => r.sink));
}

export async function markDelivered(store: AnyStore, row: OutboxRow, at: number): Promise<void> {
  const q = await queriesOf(store);
  await q.run(sql`
    UPDATE control_outbox SET delivered_at = ${at}, attempts = ${row.attempts + 1}, last_error = NULL
    WHERE finding_id = ${row.finding_id} AND sink = ${row.sink}`);
}

export async function markFailed(
  store: AnyStore,
  row: OutboxRow,
  nextAttemptAt: number,
  error: string,
): Promise<void> {
  const q = await queriesOf(store);
  await q.run(sql`
    UPDATE control_outbox SET attempts = ${row.attempts + 1}, next_attempt_at = ${nextAttemptAt},
      last_error = ${error}
    WHERE finding_id = ${row.finding_id} AND sink = ${row.sink}`);
}

/**
 * Per sink, the alerts not delivered yet and the latest error among them (null: not tried yet), as the
 * reason alone (an older row's sentence read as its reason: storedReason).
 */
export async function waitingAlerts(
  store: AnyStore,
): Promise<{ sink: string; waiting: number; lastError: string | null }[]> {
  const q = await queriesOf(store);
  const rows = await q.all<{ sink: string; waiting: number; lastError: string | null }>(sql`
    SELECT o.sink, count(*) AS waiting,
      (SELECT l.last_error FROM control_outbox l WHERE l.sink = o.sink AND l.delivered_at IS NULL
       ORDER BY l.next_attempt_at DESC, l.finding_id COLLATE "binary" LIMIT 1) AS "lastError"
    FROM control_outbox o WHERE o.delivered_at IS NULL
    GROUP BY o.sink ORDER BY o.sink COLLATE "binary"`);
  return rows.map((r) => ({
    ...r,
    lastError: r.lastError === null ? null : storedReason(r.sink, r.lastError),
  }));
}
