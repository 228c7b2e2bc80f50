// Derived rows of one config's history on a PostgreSQL store (src/store/entityLinks.ts on SQLite): the
// same rows from configHistoryRows, replaced whole for the config in one transaction.
import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import { VERSIONED_CONFIG_EDITS } from "../../api/entityActions.ts";
import { configHistoryRows } from "../entityLinks.ts";
import type { PgStore } from "./connection.ts";
import { pgTxDb } from "./entityWrites.ts";
import { auditLogs, configEditLinks, configVersionChanges, configVersions } from "./schema.ts";
import { inPgTransaction } from "./transaction.ts";

/** Rows per INSERT: well under PostgreSQL's 65,535 parameters at eight columns a row. */
const ROWS_PER_INSERT = 1000;

function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT)
    out.push(rows.slice(start, start + ROWS_PER_INSERT));
  return out;
}

export function linkAndDiffPgConfig(store: PgStore, configKey: string): Promise<void> {
  return inPgTransaction(store, async (client) => {
    const db = pgTxDb(client);
    // Within a second, seq descending is the server's listing order, oldest first (as on SQLite).
    const edits = await db
      .select({
        id: auditLogs.id,
        occurred_at: auditLogs.occurredAt,
        updated_by_user_id: auditLogs.updatedByUserId,
      })
      .from(auditLogs)
      .where(and(eq(auditLogs.name, configKey), inArray(auditLogs.actionType, [...VERSIONED_CONFIG_EDITS])))
      .orderBy(sql`${auditLogs.occurredAt} / 1000`, desc(auditLogs.seq));
    const versions = await db
      .select({
        version: configVersions.version,
        last_modified_time: configVersions.lastModifiedTime,
        last_modifier_id: configVersions.lastModifierId,
        raw: configVersions.raw,
      })
      .from(configVersions)
      .where(eq(configVersions.configKey, configKey))
      .orderBy(asc(configVersions.version));
    const { links, changes } = configHistoryRows(configKey, edits, versions);
    await db.delete(configEditLinks).where(eq(configEditLinks.configKey, configKey));
    await db.delete(configVersionChanges).where(eq(configVersionChanges.configKey, configKey));
    for (const rows of chunks(links)) await db.insert(configEditLinks).values(rows);
    for (const rows of chunks(changes)) await db.insert(configVersionChanges).values(rows);
  });
}
