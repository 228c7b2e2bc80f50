// An entity read is marked done (its entity_fetches row, which the due lists go by) in the transaction
// of what it returned: when storing its versions fails (here a trigger raising on insert, as a full disk
// or a busy store would), the config stays due, and the next run reads it again and stores its versions.
// On both engines, through the CLI in this process against the simulator on 127.0.0.1.
import { describe, expect, it } from "vitest";
import { VERSIONED_CONFIG_EDITS } from "../../src/api/entityActions.ts";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { ENGINES, type TestStore, testStore } from "../controls/engines.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, useTestSimulator } from "../helpers/simSync.ts";

const startSim = useTestSimulator();

const versionRequests = (sim: RunningSimulator) =>
  Object.entries(sim.control.counters().requests)
    .filter(([label]) => label.includes("/versions"))
    .reduce((sum, [, n]) => sum + n, 0);

const sync = (sim: RunningSimulator, store: TestStore, extra: string[] = []) =>
  runCliInProcess(["sync", "--since", daysAgo(125), "--no-coverage", "--entity-budget", "100000", ...extra], {
    env: simEnv(sim, store.db),
  });

const countOf = async (store: TestStore, text: string) =>
  Number((await store.query<{ n: number | string }>(`SELECT count(*) AS n FROM ${text}`))[0]?.n);

async function failVersionInserts(store: TestStore): Promise<void> {
  if (store.engine === "sqlite") {
    await store.query(
      "CREATE TRIGGER fail_versions BEFORE INSERT ON config_versions BEGIN SELECT RAISE(ABORT, 'no space left on device (test)'); END",
    );
    return;
  }
  await store.query(
    "CREATE FUNCTION fail_versions() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no space left on device (test)'; END $$",
  );
  await store.query(
    "CREATE TRIGGER fail_versions BEFORE INSERT ON config_versions FOR EACH ROW EXECUTE FUNCTION fail_versions()",
  );
}

describe.each(ENGINES)("an entity read on %s", (engine) => {
  it("whose versions fail to store stays due, and the next run reads and stores them", async () => {
    const sim = await startSim({ records: 300 });
    const store = await testStore(engine);
    const records = await sync(sim, store, ["--no-entities"]);
    expect(records.code, records.stderr).toBe(0);
    const configs = await countOf(
      store,
      `(SELECT DISTINCT name FROM audit_logs WHERE action_type IN ('${[...VERSIONED_CONFIG_EDITS].join("', '")}')) c`,
    );
    expect(configs).toBeGreaterThan(1);

    await failVersionInserts(store);
    const failed = await sync(sim, store);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("no space left on device (test)");
    expect(versionRequests(sim)).toBeGreaterThan(0);
    // Nothing stored, so no config read counts as done.
    expect(await countOf(store, "config_versions")).toBe(0);
    expect(await countOf(store, "entity_fetches WHERE kind = 'config_versions'")).toBe(0);

    await store.query(`DROP TRIGGER fail_versions${engine === "postgres" ? " ON config_versions" : ""}`);
    sim.control.resetCounters();
    const again = await sync(sim, store);
    expect(again.code, again.stderr).toBe(0);
    // Every edited config read again, and the versions of each that still exists stored and linked.
    expect(versionRequests(sim)).toBe(configs);
    expect(
      await countOf(
        store,
        "(SELECT DISTINCT entity_key FROM entity_fetches WHERE kind = 'config_versions') f",
      ),
    ).toBe(configs);
    const found = await countOf(store, "entity_fetches WHERE kind = 'config_versions' AND outcome = 'ok'");
    expect(found).toBeGreaterThan(0);
    expect(await countOf(store, "(SELECT DISTINCT config_key FROM config_versions) v")).toBe(found);
    expect(await countOf(store, "config_edit_links")).toBeGreaterThan(0);
  });
});
