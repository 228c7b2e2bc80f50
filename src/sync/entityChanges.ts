// What an entity read adds: the config versions new or changed (a revision when the same number comes
// back with other content) and the experiments and metrics whose content changed since their last
// snapshot. The sync decides; the store runs the decision inside its write (src/store/entityWrites.ts).
import { recordHash } from "../hash.ts";
import {
  type ChangedSnapshots,
  type MutatedVersion,
  type PlanVersions,
  type SnapshotInput,
  type Store,
  type VersionInput,
  type VersionWrite,
  type WriteContext,
  writeConfigVersions,
  writeExperimentSnapshots,
  writeMetricSnapshots,
} from "../store/syncStore.ts";

const revisionKey = (version: number, hash: string) => `${version}\u0000${hash}`;

/**
 * What a read of one config's versions adds, given the hashes stored for its versions and revisions.
 * Oldest first, so that entity_seq follows version order within a config; a version listed twice in
 * one read is decided against the first.
 */
const planConfigVersions: PlanVersions = (configKey, versions, stored) => {
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
};

/**
 * The items of one read whose content differs from their last snapshot, given the last stored hash per
 * id. An item listed twice is compared with the first.
 */
const changedSnapshots: ChangedSnapshots = (items, lastHashes) => {
  const last = new Map(lastHashes);
  return items.flatMap((item) => {
    const hash = recordHash(item.raw);
    if (last.get(item.id) === hash) return [];
    last.set(item.id, hash);
    return [{ item, raw: JSON.stringify(item.raw), hash }];
  });
};

/** Stores the versions of one config; returns how many were new and which came back changed. */
export function storeConfigVersions(
  store: Store,
  configKey: string,
  versions: readonly VersionInput[],
  context: WriteContext,
): Promise<{ inserted: number; mutations: MutatedVersion[] }> {
  return writeConfigVersions(store, configKey, versions, context, planConfigVersions);
}

/** Snapshots of a layer's experiments: a row per experiment whose content changed since its last one. */
export function storeExperimentSnapshots(
  store: Store,
  layerId: string,
  items: readonly SnapshotInput[],
  context: WriteContext,
): Promise<number> {
  return writeExperimentSnapshots(store, layerId, items, context, changedSnapshots);
}

/** Snapshots of an event's metrics: a row per metric whose content changed since its last one. */
export function storeMetricSnapshots(
  store: Store,
  eventName: string,
  items: readonly { id: string; raw: unknown }[],
  context: WriteContext,
): Promise<number> {
  return writeMetricSnapshots(store, eventName, items, context, changedSnapshots);
}
