// Derived rows of one config's history, recomputed after each read of its versions: each config-edit
// audit record linked to the version it produced, and each version's field-level diff against the one
// before. Both tables are derived (like rule_changes): replaced whole for the config, never chained.
//
// The link rule: same config (the record's name), the version's lastModifiedTime within the record's
// second, lastModifierID = the record's updatedByUserID. A tie (one person editing one config several
// times in one second) pairs versions in version order with the records in the order the server
// lists them, oldest first; what is left over on either side stays unlinked (and shows in the
// reconciliation section).
import { VERSIONED_CONFIG_EDITS } from "../api/entityActions.ts";
import { diffConfigVersions } from "../diff/configVersions.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, inTransaction, sql } from "./query.ts";

export interface EditRow {
  id: string;
  occurred_at: number | null;
  updated_by_user_id: string | null;
}

export interface VersionRow {
  version: number;
  last_modified_time: number;
  last_modifier_id: string | null;
  raw: string;
}

const groupKey = (second: number, modifier: string | null) => `${second}\u0000${modifier ?? ""}`;

/** Pairs records with versions by (second, modifier); returns [audit_log_id, version] pairs. */
export function pairEditsWithVersions(
  edits: readonly EditRow[],
  versions: readonly VersionRow[],
): [string, number][] {
  const byGroup = new Map<string, number[]>();
  for (const v of [...versions].sort((a, b) => a.version - b.version)) {
    const key = groupKey(Math.floor(v.last_modified_time / 1000), v.last_modifier_id);
    byGroup.set(key, [...(byGroup.get(key) ?? []), v.version]);
  }
  const pairs: [string, number][] = [];
  for (const edit of edits) {
    if (edit.occurred_at === null) continue;
    const waiting = byGroup.get(groupKey(Math.floor(edit.occurred_at / 1000), edit.updated_by_user_id));
    const version = waiting?.shift();
    if (version !== undefined) pairs.push([edit.id, version]);
  }
  return pairs;
}

/** A config_version_changes row (its id aside). */
interface VersionChangeRow {
  configKey: string;
  version: number;
  previousVersion: number;
  field: string;
  path: string | null;
  change: string;
  oldValue: string | null;
  newValue: string | null;
}

/**
 * The derived rows of one config's history from its edits (in the listing's order, oldest first) and
 * its versions (in version order): no database access.
 */
function configHistoryRows(
  configKey: string,
  edits: readonly EditRow[],
  versions: readonly VersionRow[],
): { links: { auditLogId: string; configKey: string; version: number }[]; changes: VersionChangeRow[] } {
  const links = pairEditsWithVersions(edits, versions).map(([auditLogId, version]) => ({
    auditLogId,
    configKey,
    version,
  }));
  const changes: VersionChangeRow[] = [];
  let previous: VersionRow | null = null;
  for (const v of versions) {
    if (previous !== null) {
      for (const c of diffConfigVersions(JSON.parse(previous.raw), JSON.parse(v.raw))) {
        changes.push({ configKey, version: v.version, previousVersion: previous.version, ...c });
      }
    }
    previous = v;
  }
  return { links, changes };
}

/** Replaces the derived rows of one config's history (links and version changes) in one transaction. */
export function linkAndDiffConfig(store: AnyStore, configKey: string): Promise<void> {
  return inTransaction(store, async (q) => {
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
  });
}
