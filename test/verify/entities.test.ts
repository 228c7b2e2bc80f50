// verify walks the entity chain: an edited raw version, an edited copied column, a row removed from the
// middle or cut off the end are each caught; an intact chain is reported with its length.
import { afterEach, describe, expect, it } from "vitest";
import { IntegrityError } from "../../src/errors.ts";
import { sqliteOf } from "../../src/store/connection.ts";
import { openStore, type Store } from "../../src/store/open.ts";
import {
  storeConfigVersions,
  storeExperimentSnapshots,
  storeMetricSnapshots,
} from "../../src/sync/entityChanges.ts";
import { verifyStore } from "../../src/verify/store.ts";

const T0 = Date.UTC(2024, 5, 1);
const ctx = { runId: null, now: T0 };
let store: Store;
afterEach(() => store?.close());

async function build(): Promise<Store> {
  const s = openStore(":memory:");
  const version = (n: number, extra: Record<string, unknown> = {}) => ({
    configId: "cfg",
    version: n,
    lastModifiedTime: T0 + n,
    lastModifierId: null,
    lastModifierName: null,
    raw: { id: "cfg", name: "limits", version: n, lastModifiedTime: T0 + n, ...extra },
  });
  await storeConfigVersions(s, "limits", [version(1), version(2)], ctx);
  await storeExperimentSnapshots(
    s,
    "layer",
    [{ id: "e1", name: "Exp", status: "active", raw: { id: "e1", name: "Exp", status: "active" } }],
    ctx,
  );
  await storeMetricSnapshots(
    s,
    "purchase",
    [{ id: "purchase::event_count", raw: { id: "purchase::event_count" } }],
    ctx,
  );
  await storeConfigVersions(s, "limits", [version(2, { description: "mutated" })], ctx);
  return s;
}

async function failure(s: Store): Promise<string> {
  const error = await verifyStore(s).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IntegrityError);
  return (error as Error).message;
}

describe("verify: the entity chain", () => {
  it("reports an intact chain of every entity row", async () => {
    store = await build();
    const check = await verifyStore(store);
    expect(check.entities).toMatchObject({ rows: 5, head: { seq: 5 } });
  });

  it("catches an edited raw record, an edited copied column, a removed row and a cut-off end", async () => {
    store = await build();
    const db = sqliteOf(store);
    db.prepare("UPDATE config_versions SET raw = json_set(raw, '$.name', 'x') WHERE version = 1").run();
    expect(await failure(store)).toMatch(/config_versions row \d+ \(entity seq 1\): record_hash differs/);
    store.close();

    store = await build();
    sqliteOf(store).prepare("UPDATE experiment_snapshots SET status = 'archived'").run();
    expect(await failure(store)).toMatch(/experiment_snapshots .*its status column differs/);
    store.close();

    store = await build();
    sqliteOf(store).prepare("DELETE FROM experiment_snapshots").run();
    expect(await failure(store)).toMatch(/expected entity seq 3: rows were removed/);
    store.close();

    store = await build();
    sqliteOf(store).prepare("DELETE FROM config_version_revisions").run();
    expect(await failure(store)).toMatch(/entity chain head recorded in meta .* is not its last row/);
  });
});
