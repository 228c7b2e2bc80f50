// Entities due for a read that an entity pass left to later runs (budget spent, a 403, a failure): what
// status and the report count as pending. The due-lists (entityQueries.ts) stay the truth of what is due.
import { ENTITY_TABLES } from "./entityTables.ts";
import type { WriteContext } from "./entityWrites.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, insertInto, inTransaction, sql } from "./query.ts";

export interface BacklogEntry {
  kind: string;
  key: string;
  /** audit_logs.seq of the newest record naming it (0 for events: no record names them). */
  newestSeq: number;
}

/** Replaces the backlog of `kinds` with `pending`; an entity already waiting keeps its pending_since. */
export async function saveEntityBacklog(
  store: AnyStore,
  kinds: readonly string[],
  pending: readonly BacklogEntry[],
  context: WriteContext,
): Promise<void> {
  await inTransaction(store, async (q) => {
    const waiting = await q.all<{ kind: string; entity_key: string; pending_since: number }>(
      sql`SELECT kind, entity_key, pending_since FROM entity_backlog WHERE kind IN ${inList(kinds)}`,
    );
    const since = new Map(waiting.map((row) => [`${row.kind}\u0000${row.entity_key}`, row.pending_since]));
    await q.run(sql`DELETE FROM entity_backlog WHERE kind IN ${inList(kinds)}`);
    await insertInto(
      q,
      ENTITY_TABLES.entityBacklog,
      pending.map((entry) => [
        entry.kind,
        entry.key,
        entry.newestSeq,
        since.get(`${entry.kind}\u0000${entry.key}`) ?? context.now,
        context.runId,
      ]),
    );
  });
}

/** Per kind: the entities known (read once, or pending) and how many are pending; plain text, as printed. */
export const ENTITY_BACKLOG_SQL = `SELECT k.kind, CAST(count(*) AS INTEGER) AS entities, CAST(sum(k.pending) AS INTEGER) AS pending
FROM (
  SELECT u.kind, u.entity_key, max(u.pending) AS pending
  FROM (
    SELECT kind, entity_key, 0 AS pending FROM entity_fetches WHERE outcome IN ('ok', 'not_found')
    UNION ALL
    SELECT kind, entity_key, 1 AS pending FROM entity_backlog
  ) u
  GROUP BY u.kind, u.entity_key
) k
GROUP BY k.kind
ORDER BY k.kind`;

export interface EntityBacklogRow {
  kind: string;
  entities: number;
  pending: number;
}
