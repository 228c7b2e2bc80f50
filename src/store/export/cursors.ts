// Export cursors (docs/export.md): per project and consumer, the audit_logs.seq it has had every record to.
import type { AnyStore } from "../openAny.ts";
import { queriesOf, sql } from "../query.ts";

/** The seq `name` has had everything up to in `project`; 0 when it never had anything. */
export async function readCursor(store: AnyStore, project: string, name: string): Promise<number> {
  const row = await (await queriesOf(store)).get<{ seq: number }>(
    sql`SELECT seq FROM export_cursors WHERE project = ${project} AND name = ${name}`,
  );
  return row?.seq ?? 0;
}

/** Moves the cursor to `seq`, never back: a slower run finishing after a newer one must not resend. */
export async function advanceCursor(
  store: AnyStore,
  project: string,
  name: string,
  seq: number,
): Promise<void> {
  await (await queriesOf(store)).run(sql`
    INSERT INTO export_cursors (project, name, seq, updated_at) VALUES (${project}, ${name}, ${seq}, ${Date.now()})
    ON CONFLICT (project, name) DO UPDATE SET
      seq = CASE WHEN excluded.seq > export_cursors.seq THEN excluded.seq ELSE export_cursors.seq END,
      updated_at = excluded.updated_at`);
}

/** `project`'s cursors named `prefix`… (the SIEM sinks'), each record's time and the records after it. */
export async function readCursorsOf(store: AnyStore, project: string, prefix: string) {
  type Row = { name: string; seq: number; updatedAt: number; occurredAt: number | null; behind: number };
  return (await queriesOf(store)).all<Row>(sql`
    SELECT c.name, c.seq, c.updated_at AS "updatedAt",
      (SELECT a.occurred_at FROM audit_logs a WHERE a.seq = c.seq) AS "occurredAt",
      (SELECT count(*) FROM audit_logs a WHERE a.seq > c.seq) AS behind
    FROM export_cursors c WHERE c.project = ${project} AND substr(c.name, 1, ${[...prefix].length}) = ${prefix}
    ORDER BY c.name COLLATE "binary"`);
}
