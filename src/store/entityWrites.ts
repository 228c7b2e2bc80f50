// Writing what the entity reads returned: config versions (one row per version, a revision when the
// same number comes back with other content), experiment and metric snapshots (a row when an item's
// content differs from its last snapshot), and one entity_fetches row per read, whatever its outcome.
import type Database from "better-sqlite3";
import type { InvalidItem } from "../api/entities.ts";
import { type Store, sqliteOf } from "./connection.ts";
import { type EntityChainHead, EntityChainWriter } from "./entityChain.ts";
import { recordHash } from "./hash.ts";
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

/** Stores the versions of one config; returns how many were new and which came back changed. */
export function storeConfigVersions(
  store: Store,
  configKey: string,
  versions: readonly VersionInput[],
  context: WriteContext,
): { inserted: number; mutations: MutatedVersion[] } {
  const sqlite = sqliteOf(store);
  const existing = sqlite.prepare(
    "SELECT record_hash FROM config_versions WHERE config_key = ? AND version = ?",
  );
  const knownRevision = sqlite.prepare(
    "SELECT 1 FROM config_version_revisions WHERE config_key = ? AND version = ? AND record_hash = ?",
  );
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
    const chain = new EntityChainWriter(sqlite);
    let inserted = 0;
    const mutations: MutatedVersion[] = [];
    // Oldest first, so that entity_seq follows version order within a config.
    for (const v of [...versions].sort((a, b) => a.version - b.version)) {
      const hash = recordHash(v.raw);
      const stored = existing.pluck().get(configKey, v.version) as string | undefined;
      if (stored === undefined) {
        const link = chain.next(hash);
        insertVersion.run(
          configKey,
          v.configId,
          v.version,
          v.lastModifiedTime,
          v.lastModifierId,
          v.lastModifierName,
          JSON.stringify(v.raw),
          hash,
          link.seq,
          link.hash,
          context.now,
          context.runId,
        );
        inserted += 1;
      } else if (stored !== hash) {
        mutations.push({ configKey, version: v.version, storedHash: stored, receivedHash: hash });
        if (knownRevision.get(configKey, v.version, hash) === undefined) {
          const link = chain.next(hash);
          insertRevision.run(
            configKey,
            v.version,
            JSON.stringify(v.raw),
            hash,
            link.seq,
            link.hash,
            context.now,
            context.runId,
          );
        }
      }
    }
    chain.commit(context.now);
    return { inserted, mutations };
  })();
}

export interface SnapshotInput {
  id: string;
  name: string;
  status: string;
  raw: unknown;
}

/**
 * Appends a snapshot for each item whose content differs from its last one, each linked in the entity
 * chain, in one transaction; returns how many were appended.
 */
function appendSnapshots<T extends { raw: unknown }>(
  sqlite: Database.Database,
  items: readonly T[],
  now: number,
  lastHash: (item: T) => unknown,
  insert: (item: T, raw: string, hash: string, link: EntityChainHead) => void,
): number {
  return sqlite.transaction(() => {
    const chain = new EntityChainWriter(sqlite);
    let inserted = 0;
    for (const item of items) {
      const hash = recordHash(item.raw);
      if (lastHash(item) === hash) continue;
      insert(item, JSON.stringify(item.raw), hash, chain.next(hash));
      inserted += 1;
    }
    chain.commit(now);
    return inserted;
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
    (item) => last.get(item.id),
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
    (item) => last.get(eventName, item.id),
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
