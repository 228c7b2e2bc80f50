// One config's history derived from its config-edit audit records and its stored versions: which record
// produced which version, and each version's field-level diff against the one before. Pure;
// src/store/entityLinks.ts reads the rows and stores what this derives.
//
// The link rule: same config (the record's name), the version's lastModifiedTime within the record's
// second, lastModifierID = the record's updatedByUserID. A tie (one person editing one config several
// times in one second) pairs versions in version order with the records in the order the server
// lists them, oldest first; what is left over on either side stays unlinked (and shows in the
// reconciliation section).
import { diffConfigVersions } from "./configVersions.ts";
import { parsedLike } from "./values.ts";

export interface EditRow {
  id: string;
  occurred_at: number | null;
  updated_by_user_id: string | null;
}

/** What linking reads of a version. */
export interface LinkVersionRow {
  version: number;
  last_modified_time: number;
  last_modifier_id: string | null;
}

/**
 * What versionChangeRows derives, numbered: bump it when its rows change. A read diffs only the versions
 * it adds, so the next sync derives every stored config's rows again once (store: rediffConfigsBehind).
 * A store without the number has version 1's rows.
 */
export const CONFIG_DIFF_VERSION = 1;

const groupKey = (second: number, modifier: string | null) => `${second}\u0000${modifier ?? ""}`;

/** Pairs records with versions by (second, modifier); returns [audit_log_id, version] pairs. */
export function pairEditsWithVersions(
  edits: readonly EditRow[],
  versions: readonly LinkVersionRow[],
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

/** The edit links of one config's history from its edits (in the listing's order, oldest first) and its versions. */
export function editLinkRows(
  configKey: string,
  edits: readonly EditRow[],
  versions: readonly LinkVersionRow[],
): { auditLogId: string; configKey: string; version: number }[] {
  return pairEditsWithVersions(edits, versions).map(([auditLogId, version]) => ({
    auditLogId,
    configKey,
    version,
  }));
}

/**
 * The version diffs of a run of consecutive versions (in version order): each version after the first
 * against the one before it. A version's rows depend on it and its predecessor alone, so the first of
 * the run is read only as the second's previous. `received`: versions as the read received them, by
 * number; each one that is what parsing its stored text would give is diffed as it is, unparsed.
 */
export function versionChangeRows(
  configKey: string,
  versions: readonly { version: number; raw: string }[],
  received?: ReadonlyMap<number, unknown>,
): VersionChangeRow[] {
  const changes: VersionChangeRow[] = [];
  // Each version parsed once: it is the next one's previous.
  let previous: { version: number; value: unknown } | null = null;
  for (const v of versions) {
    const given = received?.get(v.version);
    const value: unknown = given !== undefined && parsedLike(given) ? given : JSON.parse(v.raw);
    if (previous !== null) {
      for (const c of diffConfigVersions(previous.value, value)) {
        const { field, path, change, oldValue, newValue } = c;
        changes.push({
          configKey,
          version: v.version,
          previousVersion: previous.version,
          field,
          path,
          change,
          oldValue,
          newValue,
        });
      }
    }
    previous = { version: v.version, value };
  }
  return changes;
}
