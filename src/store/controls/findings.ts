// Findings kept per project: one row per finding id (control id + record or evidence key), first and
// last seen; a new finding's alerts go to the outbox in the same transaction, so a crash between the
// two cannot lose an alert or send one for a finding never stored.
import type { AnyStore } from "../openAny.ts";
import { inTransaction, type Queries, queriesOf, sql } from "../query.ts";
import { lockControlWrites } from "./writeLock.ts";

export interface FindingRow {
  id: string;
  control_id: string;
  kind: string;
  severity: string;
  record_id: string | null;
  entity: string | null;
  action_type: string | null;
  occurred_at: number | null;
  actor: string | null;
  message: string;
  first_seen_at: number;
  last_seen_at: number;
}

export type NewFinding = Omit<FindingRow, "first_seen_at" | "last_seen_at">;

export interface CheckWrite {
  checkedAt: number;
  periodStart: number;
  periodEnd: number;
  /** The store's newest seq before the check read its inputs. */
  lastSeq: number;
  /** The period was given rather than the default one. */
  periodGiven: boolean;
  findings: readonly NewFinding[];
  tickets: readonly { recordId: string; controlId: string; ticket: string }[];
  /** The outbox rows of a finding seen for the first time: one per sink, its JSON body. */
  alertsFor(finding: NewFinding, firstSeenAt: number): { sink: string; payload: string }[];
}

/** Rows per statement: a month of a large store gives tens of thousands of findings, not one statement each. */
const CHUNK = 200;

/** Finding ids per statement when they are bound as one JSON array. */
const ID_CHUNK = 10_000;

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const FINDING_COLUMNS = [
  "id",
  "control_id",
  "kind",
  "severity",
  "record_id",
  "entity",
  "action_type",
  "occurred_at",
  "actor",
  "message",
  "first_seen_at",
  "last_seen_at",
] as const;

// New findings and alerts through insertRows: a month's tens of thousands of rows rendered as `sql`
// fragments cost more than the inserts themselves (issue 23).
async function insertFindings(q: Queries, rows: readonly NewFinding[], at: number): Promise<void> {
  await q.insertRows(
    "control_findings",
    FINDING_COLUMNS,
    rows.map((f) => [
      f.id,
      f.control_id,
      f.kind,
      f.severity,
      f.record_id,
      f.entity,
      f.action_type,
      f.occurred_at,
      f.actor,
      f.message,
      at,
      at,
    ]),
  );
}

async function insertAlerts(
  q: Queries,
  alerts: readonly { findingId: string; sink: string; payload: string }[],
  at: number,
): Promise<void> {
  await q.insertRows(
    "control_outbox",
    ["finding_id", "sink", "payload", "created_at", "attempts", "next_attempt_at"],
    alerts.map((a) => [a.findingId, a.sink, a.payload, at, 0, at]),
  );
}

async function upsertTickets(q: Queries, tickets: CheckWrite["tickets"]): Promise<void> {
  // One statement may not touch a row twice (PostgreSQL refuses): the last key per record and control.
  const unique = [...new Map(tickets.map((t) => [`${t.controlId}\u0000${t.recordId}`, t])).values()];
  for (const chunk of chunks(unique)) {
    const values = chunk.map((t) => sql`(${t.recordId}, ${t.controlId}, ${t.ticket})`);
    await q.run(sql`
      INSERT INTO control_tickets (record_id, control_id, ticket) VALUES ${sql.join(values, sql`, `)}
      ON CONFLICT (record_id, control_id) DO UPDATE SET ticket = excluded.ticket`);
  }
}

/**
 * Stores a check's findings (new ones inserted with their alerts, known ones' last_seen_at moved),
 * its tickets and the check itself, in one transaction. Returns each finding's first-seen time.
 */
export async function writeCheck(store: AnyStore, write: CheckWrite): Promise<Map<string, number>> {
  return inTransaction(store, async (q) => {
    // Before reading which findings are known: another check's new ones are committed by then.
    await lockControlWrites(q);
    const firstSeen = new Map<string, number>();
    for (const chunk of chunks(write.findings, ID_CHUNK)) {
      // Known findings: last seen moved and first seen read in one statement; the ids bound as one JSON
      // array, since rendering tens of thousands of bound values cost more than the update (issue 23).
      const ids = JSON.stringify(chunk.map((f) => f.id));
      const known = await q.all<{ id: string; first_seen_at: number }>(sql`
        UPDATE control_findings SET last_seen_at = ${write.checkedAt}
        WHERE id IN (SELECT value FROM json_each(${ids})) RETURNING id, first_seen_at`);
      for (const k of known) firstSeen.set(k.id, Number(k.first_seen_at));
    }
    // A finding twice in one check (two evidence keys alike) is stored once.
    const fresh = [
      ...new Map(write.findings.filter((f) => !firstSeen.has(f.id)).map((f) => [f.id, f])).values(),
    ];
    await insertFindings(q, fresh, write.checkedAt);
    const alerts = fresh.flatMap((f) => {
      firstSeen.set(f.id, write.checkedAt);
      return write.alertsFor(f, write.checkedAt).map((a) => ({ ...a, findingId: f.id }));
    });
    await insertAlerts(q, alerts, write.checkedAt);
    await upsertTickets(q, write.tickets);
    const last = await q.get<{ id: number | null }>(sql`SELECT max(id) AS id FROM control_checks`);
    await q.run(sql`
      INSERT INTO control_checks (id, checked_at, period_start, period_end, findings, last_seq, period_given)
      VALUES (${(last?.id ?? 0) + 1}, ${write.checkedAt}, ${write.periodStart}, ${write.periodEnd},
        ${write.findings.length}, ${write.lastSeq}, ${write.periodGiven ? 1 : 0})`);
    return firstSeen;
  });
}

/** One finding by id, or undefined. */
export async function readFinding(store: AnyStore, id: string): Promise<FindingRow | undefined> {
  const q = await queriesOf(store);
  return q.get<FindingRow>(sql`SELECT * FROM control_findings WHERE id = ${id}`);
}
