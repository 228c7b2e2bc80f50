// Derived rows of one config's history (src/diff/configHistory.ts derives them), recomputed after each
// read of its versions: replaced whole for the config, never chained (like rule_changes).
import { VERSIONED_CONFIG_EDITS } from "../api/entityActions.ts";
import { configHistoryRows, type EditRow, type VersionRow } from "../diff/configHistory.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, inTransaction, type Queries, sql } from "./query.ts";

/** Replaces the derived rows of one config's history (links and version changes) in one transaction. */
export function linkAndDiffConfig(store: AnyStore, configKey: string): Promise<void> {
  return inTransaction(store, (q) => linkAndDiffConfigIn(q, configKey));
}

/** The same in the caller's transaction: a read of the config's versions links them in its own. */
export async function linkAndDiffConfigIn(q: Queries, configKey: string): Promise<void> {
  // The server lists newest first and the sync stores in that order, so within a second the record
  // stored last is the oldest: seq descending within the second is the listing's order, oldest first.
  const edits = await q.all<EditRow>(
    sql`SELECT id, occurred_at, updated_by_user_id FROM audit_logs
        WHERE name = ${configKey} AND action_type IN ${inList([...VERSIONED_CONFIG_EDITS])}
        ORDER BY occurred_at / 1000, seq DESC`,
  );
  const versions = await q.all<VersionRow>(
    sql`SELECT version, last_modified_time, last_modifier_id, raw FROM config_versions
        WHERE config_key = ${configKey} ORDER BY version`,
  );
  const { links, changes } = configHistoryRows(configKey, edits, versions);
  await q.run(sql`DELETE FROM config_edit_links WHERE config_key = ${configKey}`);
  await q.run(sql`DELETE FROM config_version_changes WHERE config_key = ${configKey}`);
  await q.insertRows(
    "config_edit_links",
    ["audit_log_id", "config_key", "version"],
    links.map((l) => [l.auditLogId, l.configKey, l.version]),
  );
  await q.insertRows(
    "config_version_changes",
    ["config_key", "version", "previous_version", "field", "path", "change", "old_value", "new_value"],
    changes.map((c) => [
      c.configKey,
      c.version,
      c.previousVersion,
      c.field,
      c.path,
      c.change,
      c.oldValue,
      c.newValue,
    ]),
  );
}
