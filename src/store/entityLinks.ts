// Derived rows of one config's history (src/diff/configHistory.ts derives them), after each read of its
// versions: the links replaced whole for the config, the diffs from the first version the read added on
// (those of earlier versions cannot change); never chained (like rule_changes).
import { VERSIONED_CONFIG_EDITS } from "../api/entityActions.ts";
import {
  CONFIG_DIFF_VERSION,
  type EditRow,
  editLinkRows,
  type LinkVersionRow,
  versionChangeRows,
} from "../diff/configHistory.ts";
import { ENTITY_TABLES } from "./entityTables.ts";
import { readMetaValueIn, writeMetaValueQuery } from "./metaValues.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, insertInto, inTransaction, type Queries, queriesOf, sql } from "./query.ts";

/** Replaces the derived rows of one config's whole history (links and version changes) in one transaction. */
export function linkAndDiffConfig(store: AnyStore, configKey: string): Promise<void> {
  return inTransaction(store, (q) => linkAndDiffConfigIn(q, configKey));
}

const DIFF_VERSION_KEY = "config_diff_version";
const storedDiffVersion = async (q: Queries) => Number((await readMetaValueIn(q, DIFF_VERSION_KEY)) ?? 1);

/**
 * Once per CONFIG_DIFF_VERSION: every config's rows derived again whole (reads keep earlier versions'
 * rows). Stopped, it records nothing and the next run starts again; it yields between configs (SQLite's
 * writes are synchronous: a long pass would hold off signals and the lease's heartbeat).
 */
export async function rediffConfigsBehind(store: AnyStore, signal?: AbortSignal): Promise<number> {
  const q = await queriesOf(store);
  if ((await storedDiffVersion(q)) >= CONFIG_DIFF_VERSION) return 0;
  const keys = await q.all<{ key: string }>(
    sql`SELECT DISTINCT config_key AS key FROM config_versions ORDER BY 1`,
  );
  for (const { key } of keys) {
    await new Promise(setImmediate);
    if (signal?.aborted) return 0;
    await linkAndDiffConfig(store, key);
  }
  await q.run(writeMetaValueQuery(DIFF_VERSION_KEY, String(CONFIG_DIFF_VERSION), Date.now()));
  return keys.length;
}

/**
 * The same in the caller's transaction: a read of the config's versions links them in its own. `added`:
 * the versions the read added, by number, as received (none: only the links); left out, every version.
 */
export async function linkAndDiffConfigIn(q: Queries, key: string, added?: ReadonlyMap<number, unknown>) {
  // The server lists newest first and the sync stores in that order, so within a second the record
  // stored last is the oldest: seq descending within the second is the listing's order, oldest first.
  const edits = await q.all<EditRow>(
    sql`SELECT id, occurred_at, updated_by_user_id FROM audit_logs
        WHERE name = ${key} AND action_type IN ${inList([...VERSIONED_CONFIG_EDITS])}
        ORDER BY occurred_at / 1000, seq DESC`,
  );
  const versions = await q.all<LinkVersionRow>(
    sql`SELECT version, last_modified_time, last_modifier_id FROM config_versions
        WHERE config_key = ${key} ORDER BY version`,
  );
  await q.run(sql`DELETE FROM config_edit_links WHERE config_key = ${key}`);
  await insertInto(q, ENTITY_TABLES.configEditLinks, editLinkRows(key, edits, versions));
  if (added?.size === 0) return;
  // Versions are 32-bit integers on PostgreSQL: every one is at least -2^31.
  const from = added === undefined ? -(2 ** 31) : [...added.keys()].reduce((a, b) => Math.min(a, b));
  await q.run(sql`DELETE FROM config_version_changes WHERE config_key = ${key} AND version >= ${from}`);
  // Read with the version before `from`: the first one diffed is diffed against it.
  const raws = await q.all<{ version: number; raw: string }>(
    sql`SELECT version, raw FROM config_versions WHERE config_key = ${key} AND version >= coalesce(
          (SELECT max(version) FROM config_versions WHERE config_key = ${key} AND version < ${from}), ${from})
        ORDER BY version`,
  );
  await insertInto(q, ENTITY_TABLES.configVersionChanges, versionChangeRows(key, raws, added));
  // An older binary's rows under a newer number: it goes down with them, so the newer one derives all again.
  if ((await storedDiffVersion(q)) > CONFIG_DIFF_VERSION)
    await q.run(writeMetaValueQuery(DIFF_VERSION_KEY, String(CONFIG_DIFF_VERSION), Date.now()));
}
