// Findings kept per project: one row per finding id (control id + record or evidence key), first and
// last seen; a new finding's alerts go to the outbox in the same transaction, so a crash between the
// two cannot lose an alert or send one for a finding never stored.
import type { AnyStore } from "../openAny.ts";
import { inTransaction, type Queries, queriesOf, sql } from "../query.ts";

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
  findings: readonly NewFinding[];
  tickets: readonly { recordId: string; controlId: string; ticket: string }[];
  /** The outbox rows of a finding seen for the first time: one per sink, its JSON body. */
  alertsFor(finding: NewFinding, firstSeenAt: number): { sink: string; payload: string }[];
}

async function insertFinding(q: Queries, f: NewFinding, at: number): Promise<void> {
  await q.run(sql`
    INSERT INTO control_findings (id, control_id, kind, severity, record_id, entity, action_type,
      occurred_at, actor, message, first_seen_at, last_seen_at)
    VALUES (${f.id}, ${f.control_id}, ${f.kind}, ${f.severity}, ${f.record_id}, ${f.entity},
      ${f.action_type}, ${f.occurred_at}, ${f.actor}, ${f.message}, ${at}, ${at})`);
}

/**
 * Stores a check's findings (new ones inserted with their alerts, known ones' last_seen_at moved),
 * its tickets and the check itself, in one transaction. Returns each finding's first-seen time.
 */
export async function writeCheck(store: AnyStore, write: CheckWrite): Promise<Map<string, number>> {
  return inTransaction(store, async (q) => {
    const firstSeen = new Map<string, number>();
    for (const f of write.findings) {
      const known = await q.get<{ first_seen_at: number }>(
        sql`SELECT first_seen_at FROM control_findings WHERE id = ${f.id}`,
      );
      if (known) {
        await q.run(sql`UPDATE control_findings SET last_seen_at = ${write.checkedAt} WHERE id = ${f.id}`);
        firstSeen.set(f.id, known.first_seen_at);
        continue;
      }
      await insertFinding(q, f, write.checkedAt);
      firstSeen.set(f.id, write.checkedAt);
      for (const alert of write.alertsFor(f, write.checkedAt)) {
        await q.run(sql`
          INSERT INTO control_outbox (finding_id, sink, payload, created_at, attempts, next_attempt_at)
          VALUES (${f.id}, ${alert.sink}, ${alert.payload}, ${write.checkedAt}, 0, ${write.checkedAt})`);
      }
    }
    for (const t of write.tickets) {
      await q.run(sql`
        INSERT INTO control_tickets (record_id, control_id, ticket) VALUES (${t.recordId}, ${t.controlId}, ${t.ticket})
        ON CONFLICT (record_id, control_id) DO UPDATE SET ticket = excluded.ticket`);
    }
    const last = await q.get<{ id: number | null }>(sql`SELECT max(id) AS id FROM control_checks`);
    await q.run(sql`
      INSERT INTO control_checks (id, checked_at, period_start, period_end, findings)
      VALUES (${(last?.id ?? 0) + 1}, ${write.checkedAt}, ${write.periodStart}, ${write.periodEnd},
        ${write.findings.length})`);
    return firstSeen;
  });
}

/** One finding by id, or undefined. */
export async function readFinding(store: AnyStore, id: string): Promise<FindingRow | undefined> {
  const q = await queriesOf(store);
  return q.get<FindingRow>(sql`SELECT * FROM control_findings WHERE id = ${id}`);
}
