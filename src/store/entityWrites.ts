// Writing what the entity reads returned: config versions (one row per version, a revision when the
// same number comes back with other content), experiment and metric snapshots (a row when an item's
// content differs from its last snapshot), and one entity_fetches row per read, whatever its outcome.
import type Database from "better-sqlite3";
import type { InvalidItem } from "../api/entities.ts";
import { recordHash } from "../hash.ts";
import { type Store, sqliteOf } from "./connection.ts";
import { type EntityChainHead, EntityChainWriter } from "./entityChain.ts";
import { quarantineItems } from "./writes.ts";

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

const revisionKey = (version: number, hash: string) => `${version}\u0000${hash}`;

/**
 * What a read of one config's versions adds, given the hashes stored for its versions and revisions
 * (no database access: both engines decide here). Oldest first, so that entity_seq follows version order
 * within a config; a version listed twice in one read is decided against the first.
 */
export function planConfigVersions(
  configKey: string,
  versions: readonly VersionInput[],
  stored: {
    versions: readonly { version: number; hash: string }[];
    revisions: readonly { version: number; hash: string }[];
  },
): { writes: VersionWrite[]; mutations: MutatedVersion[] } {
  const known = new Map(stored.versions.map((v) => [v.version, v.hash]));
  const revisions = new Set(stored.revisions.map((r) => revisionKey(r.version, r.hash)));
  const writes: VersionWrite[] = [];
  const mutations: MutatedVersion[] = [];
  for (const input of [...versions].sort((a, b) => a.version - b.version)) {
    const hash = recordHash(input.raw);
    const storedHash = known.get(input.version);
    if (storedHash === undefined) {
      known.set(input.version, hash);
      writes.push({ kind: "version", input, raw: JSON.stringify(input.raw), hash });
    } else if (storedHash !== hash) {
      mutations.push({ configKey, version: input.version, storedHash, receivedHash: hash });
      if (revisions.has(revisionKey(input.version, hash))) continue;
      revisions.add(revisionKey(input.version, hash));
      writes.push({ kind: "revision", input, raw: JSON.stringify(input.raw), hash });
    }
  }
  return { writes, mutations };
}

/** Stores the versions of one config; returns how many were new and which came back changed. */
export function storeConfigVersions(
  store: Store,
  configKey: string,
  versions: readonly VersionInput[],
  context: WriteContext,
): { inserted: number; mutations: MutatedVersion[] } {
  const sqlite = sqliteOf(store);
  const storedOf = (table: string) =>
    sqlite
      .prepare(`SELECT version, record_hash AS hash FROM ${table} WHERE config_key = ?`)
      .all(configKey) as { version: number; hash: string }[];
  const insertVersion = sqlite.prepare(
    `INSERT INTO config_versions (config_key, config_id, version, last_modified_time, last_modifier_id,
       last_modifier_name, raw, record_hash, entity_seq, entity_chain_hash, first_seen_at, sync_run_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertRevision = sqlite.prepare(
    `INSERT INTO config_version_revisions (config_key, version, raw, record_hash, entity_seq,
       entity_chain_hash, seen_at, sync_run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  return sqlite.transaction(() => {
    const stored = { versions: storedOf("config_versions"), revisions: storedOf("config_version_revisions") };
    const { writes, mutations } = planConfigVersions(configKey, versions, stored);
    const chain = new EntityChainWriter(sqlite);
    for (const { kind, input: v, raw, hash } of writes) {
      const link = chain.next(hash);
      if (kind === "version") {
        insertVersion.run(
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
        );
      } else {
        insertRevision.run(configKey, v.version, raw, hash, link.seq, link.hash, context.now, context.runId);
      }
    }
    chain.commit(context.now);
    return { inserted: writes.filter((w) => w.kind === "version").length, mutations };
  })();
}

export interface SnapshotInput {
  id: string;
  name: string;
  status: string;
  raw: unknown;
}

/** An item whose content differs from its last snapshot: the row to append (raw as stored, its hash). */
export interface SnapshotWrite<T> {
  item: T;
  raw: string;
  hash: string;
}

/**
 * The items of one read whose content differs from their last snapshot, given the last stored hash per
 * key (no database access: both engines decide here). An item listed twice is compared with the first.
 */
export function changedSnapshots<T extends { raw: unknown }>(
  items: readonly T[],
  keyOf: (item: T) => string,
  lastHashes: ReadonlyMap<string, string>,
): SnapshotWrite<T>[] {
  const last = new Map(lastHashes);
  const writes: SnapshotWrite<T>[] = [];
  for (const item of items) {
    const hash = recordHash(item.raw);
    if (last.get(keyOf(item)) === hash) continue;
    last.set(keyOf(item), hash);
    writes.push({ item, raw: JSON.stringify(item.raw), hash });
  }
  return writes;
}

/**
 * Appends a snapshot for each item whose content differs from its last one, each linked in the entity
 * chain, in one transaction; returns how many were appended.
 */
function appendSnapshots<T extends { id: string; raw: unknown }>(
  sqlite: Database.Database,
  items: readonly T[],
  now: number,
  lastHash: (id: string) => unknown,
  insert: (item: T, raw: string, hash: string, link: EntityChainHead) => void,
): number {
  return sqlite.transaction(() => {
    const lastHashes = new Map<string, string>();
    for (const { id } of items) {
      const hash = lastHash(id);
      if (typeof hash === "string") lastHashes.set(id, hash);
    }
    const chain = new EntityChainWriter(sqlite);
    const writes = changedSnapshots(items, (item) => item.id, lastHashes);
    for (const { item, raw, hash } of writes) insert(item, raw, hash, chain.next(hash));
    chain.commit(now);
    return writes.length;
  })();
}

/** Snapshots of a layer's experiments: a row per experiment whose content changed since its last one. */
export function storeExperimentSnapshots(
  store: Store,
  layerId: string,
  items: readonly SnapshotInput[],
  context: WriteContext,
): number {
  const sqlite = sqliteOf(store);
  const last = sqlite
    .prepare(
      "SELECT record_hash FROM experiment_snapshots WHERE experiment_id = ? ORDER BY entity_seq DESC LIMIT 1",
    )
    .pluck();
  const insert = sqlite.prepare(
    `INSERT INTO experiment_snapshots (layer_id, experiment_id, name, status, taken_at, raw, record_hash,
       entity_seq, entity_chain_hash, sync_run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  return appendSnapshots(
    sqlite,
    items,
    context.now,
    (id) => last.get(id),
    (item, raw, hash, link) =>
      insert.run(
        layerId,
        item.id,
        item.name,
        item.status,
        context.now,
        raw,
        hash,
        link.seq,
        link.hash,
        context.runId,
      ),
  );
}

/** Snapshots of an event's metrics: a row per metric whose content changed since its last one. */
export function storeMetricSnapshots(
  store: Store,
  eventName: string,
  items: readonly { id: string; raw: unknown }[],
  context: WriteContext,
): number {
  const sqlite = sqliteOf(store);
  const last = sqlite
    .prepare(
      "SELECT record_hash FROM metric_snapshots WHERE event_name = ? AND metric_id = ? ORDER BY entity_seq DESC LIMIT 1",
    )
    .pluck();
  const insert = sqlite.prepare(
    `INSERT INTO metric_snapshots (event_name, metric_id, taken_at, raw, record_hash, entity_seq,
       entity_chain_hash, sync_run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  return appendSnapshots(
    sqlite,
    items,
    context.now,
    (id) => last.get(eventName, id),
    (item, raw, hash, link) =>
      insert.run(eventName, item.id, context.now, raw, hash, link.seq, link.hash, context.runId),
  );
}

export type EntityFetchOutcome = "ok" | "not_found" | "forbidden";

/** Items of an entity read that failed their schema, quarantined (never dropped); returns the new ones. */
export function quarantineEntityItems(
  store: Store,
  items: readonly InvalidItem[],
  requestPath: string,
  context: WriteContext,
): number {
  const sqlite = sqliteOf(store);
  return sqlite
    .transaction(() =>
      quarantineItems(sqlite, items, { requestPath, now: context.now, syncRunId: context.runId }),
    )
    .immediate();
}

/** One entity read as it ended, stamped with the newest audit record it has caught up with. */
export function recordEntityFetch(
  store: Store,
  fetch: { kind: string; key: string; outcome: EntityFetchOutcome; items: number; invalid: number },
  context: WriteContext,
): void {
  sqliteOf(store)
    .prepare(
      `INSERT INTO entity_fetches (kind, entity_key, outcome, items, invalid, audit_seq, fetched_at, sync_run_id)
       VALUES (?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) FROM audit_logs), ?, ?)`,
    )
    .run(fetch.kind, fetch.key, fetch.outcome, fetch.items, fetch.invalid, context.now, context.runId);
}
