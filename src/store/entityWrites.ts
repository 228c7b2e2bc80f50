// Writing what the entity reads returned, each write one transaction whose rows are linked in the entity
// chain. What is new or changed is the sync's decision (src/sync/entityChanges.ts), run inside the write.
import type { InvalidItem } from "../api/entities.ts";
import type { EntitySigning } from "../entityChainChecks.ts";
import type {
  ChangedSnapshots,
  EntityFetch,
  MutatedVersion,
  PlanVersions,
  SnapshotInput,
  SnapshotItem,
  StoredHash,
  VersionInput,
} from "../records/entityRows.ts";
import { itemQuarantineRowOf } from "../records/quarantineRows.ts";
import { checkQuarantineEndIn } from "./chainRead.ts";
import { insertQuarantineIn, updateQuarantineDigestIn } from "./digests.ts";
import { inEntityChain } from "./entityChain.ts";
import { linkAndDiffConfigIn } from "./entityLinks.ts";
import { ENTITY_TABLES } from "./entityTables.ts";
import type { AnyStore } from "./openAny.ts";
import { inList, insertInto, onStore, type Queries, type SQL, sql } from "./query.ts";
import type { TableSpec } from "./tableKinds.ts";

export interface WriteContext {
  runId: number | null;
  now: number;
  /** The entity chain's head checked and signed with the key (entityChain.ts). */
  signing?: EntitySigning | undefined;
  /** The ok read whose items are written: its fetch row and invalid items go in the same transaction. */
  read?: EntityFetch & { invalidItems: readonly InvalidItem[]; requestPath: string };
}

/** Writes the versions of one config `plan` decides; returns how many were new and which came back changed. */
export function writeConfigVersions(
  store: AnyStore,
  configKey: string,
  versions: readonly VersionInput[],
  context: WriteContext,
  plan: PlanVersions,
): Promise<{ inserted: number; mutations: MutatedVersion[] }> {
  return inEntityChain(store, context, async (q, chain) => {
    const storedOf = (table: string) =>
      q.all<StoredHash>(
        sql`SELECT version, record_hash AS hash FROM ${sql.raw(table)} WHERE config_key = ${configKey}`,
      );
    const stored = {
      versions: await storedOf("config_versions"),
      revisions: await storedOf("config_version_revisions"),
    };
    const { writes, mutations } = plan(configKey, versions, stored);
    const versionRows: unknown[][] = [];
    const revisionRows: unknown[][] = [];
    const added = new Map<number, unknown>(); // linked and diffed from the lowest on
    for (const { kind, input: v, raw, hash } of writes) {
      const link = chain.next(hash);
      const chained = [raw, hash, link.seq, link.hash, context.now, context.runId];
      if (kind === "version") {
        added.set(v.version, v.raw);
        const modified = [v.lastModifiedTime, v.lastModifierId, v.lastModifierName];
        versionRows.push([configKey, v.configId, v.version, ...modified, ...chained]);
      } else {
        revisionRows.push([configKey, v.version, ...chained]);
      }
    }
    const { configVersions, configVersionRevisions } = ENTITY_TABLES;
    await insertInto(q, configVersions, versionRows);
    await insertInto(q, configVersionRevisions, revisionRows);
    await linkAndDiffConfigIn(q, configKey, added);
    await finishReadIn(q, context);
    return { inserted: versionRows.length, mutations };
  });
}

// A writer of one kind of snapshot, for the entity (`owner`: a layer, an event) a read was of. It appends a
// row to `into.table` for each item `changed` finds differing from its newest row (by `idColumn`, among the
// rows `scope` selects), and returns how many. `keyOf` gives the columns before taken_at.
function snapshotWriter<T extends SnapshotItem>(
  into: (owner: string) => { table: TableSpec; idColumn: string; scope: SQL; keyOf: (item: T) => unknown[] },
) {
  return (
    store: AnyStore,
    owner: string,
    items: readonly T[],
    context: WriteContext,
    changed: ChangedSnapshots,
  ) =>
    inEntityChain(store, context, async (q, chain) => {
      const { table, idColumn, scope, keyOf } = into(owner);
      const ids = [...new Set(items.map((item) => item.id))];
      const id = sql.raw(idColumn);
      const last =
        ids.length === 0
          ? []
          : await q.all<{ id: string; hash: string }>(
              sql`SELECT id, hash FROM (
                  SELECT ${id} AS id, record_hash AS hash,
                         row_number() OVER (PARTITION BY ${id} ORDER BY entity_seq DESC) AS n
                  FROM ${sql.raw(table.name)} WHERE ${scope} ${id} IN ${inList(ids)}) newest
                WHERE n = 1`,
            );
      const writes = changed(items, new Map(last.map((r) => [r.id, r.hash])));
      const rows = writes.map(({ item, raw, hash }) => {
        const link = chain.next(hash);
        return [...keyOf(item), context.now, raw, hash, link.seq, link.hash, context.runId];
      });
      await insertInto(q, table, rows);
      await finishReadIn(q, context);
      return writes.length;
    });
}

/** Snapshots of a layer's experiments: a row per experiment whose content changed since its last one. */
export const writeExperimentSnapshots = snapshotWriter<SnapshotInput>((layerId) => ({
  table: ENTITY_TABLES.experimentSnapshots,
  idColumn: "experiment_id",
  scope: sql``,
  keyOf: (item) => [layerId, item.id, item.name, item.status],
}));

/** Snapshots of an event's metrics: a row per metric whose content changed since its last one. */
export const writeMetricSnapshots = snapshotWriter<SnapshotItem>((eventName) => ({
  table: ENTITY_TABLES.metricSnapshots,
  idColumn: "metric_id",
  scope: sql`event_name = ${eventName} AND`,
  keyOf: (item) => [eventName, item.id],
}));

// A read is marked done (the due lists go by its fetch row) in the transaction of what it returned: a
// write that fails leaves the entity due, and the next run reads it again. Invalid items are never
// dropped: each is kept whole in quarantine with its issues.
async function finishReadIn(q: Queries, { read, now, runId }: WriteContext): Promise<void> {
  if (read === undefined) return;
  const where = { requestPath: read.requestPath, now, syncRunId: runId };
  if (read.invalidItems.length > 0) await checkQuarantineEndIn(q);
  for (const item of read.invalidItems) await insertQuarantineIn(q, itemQuarantineRowOf(item, where));
  if (read.invalidItems.length > 0) await updateQuarantineDigestIn(q);
  await recordEntityFetchIn(q, read, { runId, now });
}

/** An entity read that stores nothing (a 404 or 403), stamped with the newest audit record it caught up with. */
export const recordEntityFetch = onStore(recordEntityFetchIn);

async function recordEntityFetchIn(q: Queries, fetch: EntityFetch, context: WriteContext): Promise<void> {
  await q.run(
    sql`INSERT INTO entity_fetches (kind, entity_key, outcome, items, invalid, audit_seq, fetched_at, sync_run_id)
        VALUES (${fetch.kind}, ${fetch.key}, ${fetch.outcome}, ${fetch.items}, ${fetch.invalid},
          (SELECT coalesce(max(seq), 0) FROM audit_logs), ${context.now}, ${context.runId})`,
  );
}
