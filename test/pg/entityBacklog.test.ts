// The entity backlog's one query text on both engines: a pass's leftovers replace the last pass's, an
// entity still waiting keeps the time it was first left, and status reads read/known/pending per kind.
import { afterEach, describe, expect, it } from "vitest";
import { formatStatus } from "../../src/commands/statusText.ts";
import { readStatus } from "../../src/commands/storeStatus.ts";
import { openStore, recordEntityFetch, type Store, saveEntityBacklog } from "../../src/store/syncStore.ts";
import { freshDatabase, queryOnce } from "./cluster.ts";

const T0 = Date.UTC(2030, 0, 1);
let store: Store | undefined;

afterEach(async () => {
  await store?.close();
  store = undefined;
});

const engines = [
  ["SQLite", async () => ({ url: ":memory:" })],
  ["PostgreSQL", async () => ({ url: await freshDatabase("backlog") })],
] as const;

describe.each(engines)("the entity backlog on %s", (_engine, database) => {
  it("replaces the last pass's leftovers, keeps pending_since of those still waiting, and status counts them", async () => {
    const { url } = await database();
    store = await openStore(url);
    const fetched = (key: string) =>
      recordEntityFetch(
        store as Store,
        { kind: "config_versions", key, outcome: "ok", items: 1, invalid: 0 },
        { runId: 1, now: T0 },
      );
    await fetched("a");
    await fetched("b");
    const kinds = ["config_versions", "layer_experiments", "event_metrics"];
    await saveEntityBacklog(
      store,
      kinds,
      [
        { kind: "config_versions", key: "b", newestSeq: 9 },
        { kind: "config_versions", key: "c", newestSeq: 7 },
        { kind: "layer_experiments", key: "L1", newestSeq: 8 },
      ],
      { runId: 1, now: T0 },
    );
    await saveEntityBacklog(
      store,
      kinds,
      [
        { kind: "config_versions", key: "c", newestSeq: 7 },
        { kind: "layer_experiments", key: "L1", newestSeq: 8 },
      ],
      { runId: 2, now: T0 + 1000 },
    );
    const status = await readStatus(store);
    expect(status.entityHistory).toEqual([
      { kind: "config_versions", entities: 3, pending: 1 },
      { kind: "layer_experiments", entities: 1, pending: 1 },
    ]);
    expect(formatStatus(status)).toContain("  config versions read for 2 of 3 edited configs; 1 pending\n");
    expect(formatStatus(status)).toContain("  layer experiments read for 0 of 1 layers; 1 pending\n");
    const since =
      url === ":memory:"
        ? null
        : await queryOnce<{ entity_key: string; pending_since: string }>(
            url,
            'SELECT entity_key, pending_since::text FROM entity_backlog ORDER BY entity_key COLLATE "C"',
          );
    if (since !== null) {
      expect(since).toEqual([
        { entity_key: "L1", pending_since: String(T0) },
        { entity_key: "c", pending_since: String(T0) },
      ]);
    }
  });
});
