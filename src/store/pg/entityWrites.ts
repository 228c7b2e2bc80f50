// Writing what the entity reads returned, on a PostgreSQL store (src/store/entityWrites.ts on SQLite):
// the same decisions (planConfigVersions, changedSnapshots, EntityChainLinks, itemQuarantineRowOf), so the
// same rows, entity_seq and chain hashes on both engines; each write in one transaction.
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import type pg from "pg";
import type { InvalidItem } from "../../api/entities.ts";
import type { EntityChainHead } from "../entityChain.ts";
import {
  changedSnapshots,
  type EntityFetchOutcome,
  type MutatedVersion,
  planConfigVersions,
  type SnapshotInput,
  type VersionInput,
  type WriteContext,
} from "../entityWrites.ts";
import { itemQuarantineRowOf } from "../quarantineRows.ts";
import type { PgStore } from "./connection.ts";
import { commitPgEntityChain, pgEntityChainLinks } from "./entityChain.ts";
import { insertPgQuarantine, updatePgQuarantineDigest } from "./quarantine.ts";
import * as schema from "./schema.ts";
import { inPgTransaction } from "./transaction.ts";

const { configVersionRevisions, configVersions, entityFetches, experimentSnapshots, metricSnapshots } =
  schema;

/** drizzle's query builder over a transaction's session (inPgTransaction hands out a pool client). */
export function pgTxDb(client: pg.ClientBase) {
  return drizzle({ client: client as pg.PoolClient, schema });
}

/** Stores the versions of one config; returns how many were new and which came back changed. */
export function storePgConfigVersions(
  store: PgStore,
  configKey: string,
  versions: readonly VersionInput[],
  context: WriteContext,
): Promise<{ inserted: number; mutations: MutatedVersion[] }> {
  return inPgTransaction(store, async (client) => {
    const db = pgTxDb(client);
    const stored = {
      versions: await db
        .select({ version: configVersions.version, hash: configVersions.recordHash })
        .from(configVersions)
        .where(eq(configVersions.configKey, configKey)),
      revisions: await db
        .select({ version: configVersionRevisions.version, hash: configVersionRevisions.recordHash })
        .from(configVersionRevisions)
        .where(eq(configVersionRevisions.configKey, configKey)),
    };
    const { writes, mutations } = planConfigVersions(configKey, versions, stored);
    const chain = await pgEntityChainLinks(client);
    for (const { kind, input: v, raw, hash } of writes) {
      const link = chain.next(hash);
      if (kind === "version") {
        await db.insert(configVersions).values({
          configKey,
          configId: v.configId,
          version: v.version,
          lastModifiedTime: v.lastModifiedTime,
          lastModifierId: v.lastModifierId,
          lastModifierName: v.lastModifierName,
          raw,
          recordHash: hash,
          entitySeq: link.seq,
          entityChainHash: link.hash,
          firstSeenAt: context.now,
          syncRunId: context.runId,
        });
      } else {
        await db.insert(configVersionRevisions).values({
          configKey,
          version: v.version,
          raw,
          recordHash: hash,
          entitySeq: link.seq,
          entityChainHash: link.hash,
          seenAt: context.now,
          syncRunId: context.runId,
        });
      }
    }
    await commitPgEntityChain(client, chain, context.now);
    return { inserted: writes.filter((w) => w.kind === "version").length, mutations };
  });
}

/**
 * Appends a snapshot for each item whose content differs from its last one (`lastHashes` reads the last
 * stored hash per item id), each linked in the entity chain, in one transaction; returns how many.
 */
function appendPgSnapshots<T extends { id: string; raw: unknown }>(
  store: PgStore,
  items: readonly T[],
  now: number,
  lastHashes: (client: pg.ClientBase, ids: string[]) => Promise<{ id: string; hash: string }[]>,
  insert: (
    client: pg.ClientBase,
    item: T,
    raw: string,
    hash: string,
    link: EntityChainHead,
  ) => Promise<unknown>,
): Promise<number> {
  return inPgTransaction(store, async (client) => {
    const ids = [...new Set(items.map((item) => item.id))];
    const last = ids.length === 0 ? [] : await lastHashes(client, ids);
    const writes = changedSnapshots(items, (item) => item.id, new Map(last.map((r) => [r.id, r.hash])));
    const chain = await pgEntityChainLinks(client);
    for (const { item, raw, hash } of writes) await insert(client, item, raw, hash, chain.next(hash));
    await commitPgEntityChain(client, chain, now);
    return writes.length;
  });
}

/** Snapshots of a layer's experiments: a row per experiment whose content changed since its last one. */
export function storePgExperimentSnapshots(
  store: PgStore,
  layerId: string,
  items: readonly SnapshotInput[],
  context: WriteContext,
): Promise<number> {
  return appendPgSnapshots(
    store,
    items,
    context.now,
    (client, ids) =>
      pgTxDb(client)
        .selectDistinctOn([experimentSnapshots.experimentId], {
          id: experimentSnapshots.experimentId,
          hash: experimentSnapshots.recordHash,
        })
        .from(experimentSnapshots)
        .where(inArray(experimentSnapshots.experimentId, ids))
        .orderBy(experimentSnapshots.experimentId, desc(experimentSnapshots.entitySeq)),
    (client, item, raw, hash, link) =>
      pgTxDb(client).insert(experimentSnapshots).values({
        layerId,
        experimentId: item.id,
        name: item.name,
        status: item.status,
        takenAt: context.now,
        raw,
        recordHash: hash,
        entitySeq: link.seq,
        entityChainHash: link.hash,
        syncRunId: context.runId,
      }),
  );
}

/** Snapshots of an event's metrics: a row per metric whose content changed since its last one. */
export function storePgMetricSnapshots(
  store: PgStore,
  eventName: string,
  items: readonly { id: string; raw: unknown }[],
  context: WriteContext,
): Promise<number> {
  return appendPgSnapshots(
    store,
    items,
    context.now,
    (client, ids) =>
      pgTxDb(client)
        .selectDistinctOn([metricSnapshots.metricId], {
          id: metricSnapshots.metricId,
          hash: metricSnapshots.recordHash,
        })
        .from(metricSnapshots)
        .where(and(eq(metricSnapshots.eventName, eventName), inArray(metricSnapshots.metricId, ids)))
        .orderBy(metricSnapshots.metricId, desc(metricSnapshots.entitySeq)),
    (client, item, raw, hash, link) =>
      pgTxDb(client).insert(metricSnapshots).values({
        eventName,
        metricId: item.id,
        takenAt: context.now,
        raw,
        recordHash: hash,
        entitySeq: link.seq,
        entityChainHash: link.hash,
        syncRunId: context.runId,
      }),
  );
}

/** Items of an entity read that failed their schema, quarantined (never dropped); returns the new ones. */
export function quarantinePgEntityItems(
  store: PgStore,
  items: readonly InvalidItem[],
  requestPath: string,
  context: WriteContext,
): Promise<number> {
  return inPgTransaction(store, async (client) => {
    if (items.length === 0) return 0;
    let fresh = 0;
    for (const item of items) {
      const row = itemQuarantineRowOf(item, { requestPath, now: context.now, syncRunId: context.runId });
      if (await insertPgQuarantine(client, row)) fresh += 1;
    }
    await updatePgQuarantineDigest(client);
    return fresh;
  });
}

/** One entity read as it ended, stamped with the newest audit record it has caught up with. */
export async function recordPgEntityFetch(
  store: PgStore,
  fetch: { kind: string; key: string; outcome: EntityFetchOutcome; items: number; invalid: number },
  context: WriteContext,
): Promise<void> {
  await inPgTransaction(store, (client) =>
    pgTxDb(client).insert(entityFetches).values({
      kind: fetch.kind,
      entityKey: fetch.key,
      outcome: fetch.outcome,
      items: fetch.items,
      invalid: fetch.invalid,
      auditSeq: sql`(SELECT coalesce(max(seq), 0) FROM audit_logs)`,
      fetchedAt: context.now,
      syncRunId: context.runId,
    }),
  );
}
