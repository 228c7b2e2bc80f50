// Writing what the entity reads returned, each write one transaction whose rows are linked in the entity
// chain: config versions and their revisions, experiment and metric snapshots, an entity_fetches row per
// read. What is new or changed is the sync's decision (src/sync/entityChanges.ts), run inside the write.
import type { InvalidItem } from "../api/entities.ts";
import { itemQuarantineRowOf } from "../records/quarantineRows.ts";
import { insertQuarantineIn, updateQuarantineDigestIn } from "./digests.ts";
import { commitEntityChainIn, entityChainLinksIn } from "./entityChain.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, inTransaction, queriesOf, type SQL, sql } from "./query.ts";

export interface VersionInput {
  configId: string;
  version: number;
  lastModifiedTime: number;
  lastModifierId: string | null;
  lastModifierName: string | null;
  raw: unknown;
}

export interface MutatedVersion {
  configKey: string;
  version: number;
  storedHash: string;
  receivedHash: string;
}

export interface WriteContext {
  runId: number | null;
  now: number;
}

/** One row a config read adds: a new version, or a revision of a known one (other content). */
export interface VersionWrite {
  kind: "version" | "revision";
  input: VersionInput;
  /** The raw version as stored (JSON text) and its hash. */
  raw: string;
  hash: string;
}

/** The hashes stored for one config's versions and revisions. */
interface StoredVersionHashes {
  versions: readonly { version: number; hash: string }[];
  revisions: readonly { version: number; hash: string }[];
}

/** What a read of one config's versions adds, given the hashes stored; oldest first (entity_seq follows). */
export type PlanVersions = (
  configKey: string,
  versions: readonly VersionInput[],
  stored: StoredVersionHashes,
) => { writes: VersionWrite[]; mutations: MutatedVersion[] };

const VERSION_COLUMNS = [
  "config_key",
  "config_id",
  "version",
  "last_modified_time",
  "last_modifier_id",
  "last_modifier_name",
  "raw",
  "record_hash",
  "entity_seq",
  "entity_chain_hash",
  "first_seen_at",
  "sync_run_id",
];
const REVISION_COLUMNS = [
  "config_key",
  "version",
  "raw",
  "record_hash",
  "entity_seq",
  "entity_chain_hash",
  "seen_at",
  "sync_run_id",
];

/** Writes the versions of one config `plan` decides; returns how many were new and which came back changed. */
export function writeConfigVersions(
  store: AnyStore,
  configKey: string,
  versions: readonly VersionInput[],
  context: WriteContext,
  plan: PlanVersions,
): Promise<{ inserted: number; mutations: MutatedVersion[] }> {
  return inTransaction(store, async (q) => {
    const storedOf = (table: string) =>
      q.all<{ version: number; hash: string }>(
        sql`SELECT version, record_hash AS hash FROM ${sql.raw(table)} WHERE config_key = ${configKey}`,
      );
    const stored = {
      versions: await storedOf("config_versions"),
      revisions: await storedOf("config_version_revisions"),
    };
    const { writes, mutations } = plan(configKey, versions, stored);
    const chain = await entityChainLinksIn(q);
    const versionRows: unknown[][] = [];
    const revisionRows: unknown[][] = [];
    for (const { kind, input: v, raw, hash } of writes) {
      const link = chain.next(hash);
      if (kind === "version") {
        versionRows.push([
          configKey,
          v.configId,
          v.version,
          v.lastModifiedTime,
          v.lastModifierId,
          v.lastModifierName,
          raw,
          hash,
          link.seq,
          link.hash,
          context.now,
          context.runId,
        ]);
      } else {
        revisionRows.push([configKey, v.version, raw, hash, link.seq, link.hash, context.now, context.runId]);
      }
    }
    await q.insertRows("config_versions", VERSION_COLUMNS, versionRows);
    await q.insertRows("config_version_revisions", REVISION_COLUMNS, revisionRows);
    await commitEntityChainIn(q, chain, context.now);
    return { inserted: versionRows.length, mutations };
  });
}

export interface SnapshotInput {
  id: string;
  name: string;
  status: string;
  raw: unknown;
}

/** An item whose content differs from its last snapshot: the row to append (raw as stored, its hash). */
interface SnapshotWrite<T> {
  item: T;
  raw: string;
  hash: string;
}

/** Which items of one read differ from their last snapshot, given the last stored hash per item id. */
export type ChangedSnapshots = <T extends { id: string; raw: unknown }>(
  items: readonly T[],
  lastHashes: ReadonlyMap<string, string>,
) => SnapshotWrite<T>[];

/**
 * Appends a snapshot for each item `changed` finds differing from its last one; returns how many.
 * `lastHashes` queries the last stored hash per item id (`id`, `hash`).
 */
function appendSnapshots<T extends { id: string; raw: unknown }>(
  store: AnyStore,
  items: readonly T[],
  context: WriteContext,
  changed: ChangedSnapshots,
  lastHashes: (ids: readonly string[]) => SQL,
  insert: {
    table: string;
    /** The snapshot's own key columns; every snapshot table then has SNAPSHOT_COLUMNS. */
    keys: readonly string[];
    key: (item: T) => unknown[];
  },
): Promise<number> {
  return inTransaction(store, async (q) => {
    const ids = [...new Set(items.map((item) => item.id))];
    const last = ids.length === 0 ? [] : await q.all<{ id: string; hash: string }>(lastHashes(ids));
    const writes = changed(items, new Map(last.map((r) => [r.id, r.hash])));
    const chain = await entityChainLinksIn(q);
    const rows = writes.map(({ item, raw, hash }) => {
      const link = chain.next(hash);
      return [...insert.key(item), context.now, raw, hash, link.seq, link.hash, context.runId];
    });
    await q.insertRows(insert.table, [...insert.keys, ...SNAPSHOT_COLUMNS], rows);
    await commitEntityChainIn(q, chain, context.now);
    return writes.length;
  });
}

/** What every snapshot row holds after its key: when, the content and its hash, its link in the entity chain. */
const SNAPSHOT_COLUMNS = ["taken_at", "raw", "record_hash", "entity_seq", "entity_chain_hash", "sync_run_id"];

/** The newest row's record_hash per key among `where`'s rows of `table` (keyed by `key`). */
function newestHashes(table: string, key: string, where: SQL): SQL {
  return sql`SELECT id, hash FROM (
      SELECT ${sql.raw(key)} AS id, record_hash AS hash,
             row_number() OVER (PARTITION BY ${sql.raw(key)} ORDER BY entity_seq DESC) AS n
      FROM ${sql.raw(table)} WHERE ${where}) newest
    WHERE n = 1`;
}

/** Snapshots of a layer's experiments: a row per experiment whose content changed since its last one. */
export function writeExperimentSnapshots(
  store: AnyStore,
  layerId: string,
  items: readonly SnapshotInput[],
  context: WriteContext,
  changed: ChangedSnapshots,
): Promise<number> {
  return appendSnapshots(
    store,
    items,
    context,
    changed,
    (ids) => newestHashes("experiment_snapshots", "experiment_id", sql`experiment_id IN ${inList(ids)}`),
    {
      table: "experiment_snapshots",
      keys: ["layer_id", "experiment_id", "name", "status"],
      key: (item) => [layerId, item.id, item.name, item.status],
    },
  );
}

/** Snapshots of an event's metrics: a row per metric whose content changed since its last one. */
export function writeMetricSnapshots(
  store: AnyStore,
  eventName: string,
  items: readonly { id: string; raw: unknown }[],
  context: WriteContext,
  changed: ChangedSnapshots,
): Promise<number> {
  return appendSnapshots(
    store,
    items,
    context,
    changed,
    (ids) =>
      newestHashes(
        "metric_snapshots",
        "metric_id",
        sql`event_name = ${eventName} AND metric_id IN ${inList(ids)}`,
      ),
    { table: "metric_snapshots", keys: ["event_name", "metric_id"], key: (item) => [eventName, item.id] },
  );
}

export type EntityFetchOutcome = "ok" | "not_found" | "forbidden";

/** Items of an entity read that failed their schema, quarantined (never dropped); returns the new ones. */
export function quarantineEntityItems(
  store: AnyStore,
  items: readonly InvalidItem[],
  requestPath: string,
  context: WriteContext,
): Promise<number> {
  return inTransaction(store, async (q) => {
    if (items.length === 0) return 0;
    let fresh = 0;
    for (const item of items) {
      const row = itemQuarantineRowOf(item, { requestPath, now: context.now, syncRunId: context.runId });
      if (await insertQuarantineIn(q, row)) fresh += 1;
    }
    await updateQuarantineDigestIn(q);
    return fresh;
  });
}

/** One entity read as it ended, stamped with the newest audit record it has caught up with. */
export async function recordEntityFetch(
  store: AnyStore,
  fetch: { kind: string; key: string; outcome: EntityFetchOutcome; items: number; invalid: number },
  context: WriteContext,
): Promise<void> {
  await (await queriesOf(store)).run(
    sql`INSERT INTO entity_fetches (kind, entity_key, outcome, items, invalid, audit_seq, fetched_at, sync_run_id)
        VALUES (${fetch.kind}, ${fetch.key}, ${fetch.outcome}, ${fetch.items}, ${fetch.invalid},
          (SELECT coalesce(max(seq), 0) FROM audit_logs), ${context.now}, ${context.runId})`,
  );
}
