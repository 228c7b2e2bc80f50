// An entity read's rows as the writers take them, and the shapes of the sync's decisions over them
// (src/sync/entityChanges.ts decides, src/store/entityWrites.ts runs the decision inside its write). Pure:
// no database, so not in src/store (as ./pageTally.ts for audit records).

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

/** An entity read as it ended: its entity_fetches row. */
export interface EntityFetch {
  kind: string;
  key: string;
  outcome: "ok" | "not_found" | "forbidden";
  items: number;
  invalid: number;
}

/** One row a config read adds: a new version, or a revision of a known one (other content). */
export interface VersionWrite {
  kind: "version" | "revision";
  input: VersionInput;
  /** The raw version as stored (JSON text) and its hash. */
  raw: string;
  hash: string;
}

export type StoredHash = { version: number; hash: string };

/** What a read of one config's versions adds, given the hashes stored; oldest first (entity_seq follows). */
export type PlanVersions = (
  configKey: string,
  versions: readonly VersionInput[],
  stored: { versions: readonly StoredHash[]; revisions: readonly StoredHash[] },
) => { writes: VersionWrite[]; mutations: MutatedVersion[] };

export type SnapshotItem = { id: string; raw: unknown };
export type SnapshotInput = SnapshotItem & { name: string; status: string };

/** Which items of one read differ from their last snapshot, given the last stored hash per item id. */
export type ChangedSnapshots = <T extends SnapshotItem>(
  items: readonly T[],
  lastHashes: ReadonlyMap<string, string>,
) => { item: T; raw: string; hash: string }[];
