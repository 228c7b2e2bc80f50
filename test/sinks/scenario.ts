// The set-up shared by the tests of sinks and alerts against a real receiver: a simulator, a store of
// either engine with a config of controls and sinks beside it, and the CLI's environment for both. Each
// test then reads as its scenario: what the receiver refuses, what runs, what arrives.
import { expect } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { type Engine, type TestStore, testStore } from "../controls/engines.ts";
import { API } from "../controls/plant.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import type { CliResult } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";

/** A restricted-actor control on the console API's changes to the entities named `prefix`…: one finding each. */
export function apiChangesTo(prefix: string) {
  return {
    id: "ra",
    kind: "restricted-actor",
    severity: "low",
    entityPattern: `^${prefix}`,
    actors: ["CONSOLE API"],
  };
}

export interface SinkScenario {
  sim: RunningSimulator;
  store: TestStore;
  /** The CLI's environment: the simulator, the store, the config, and the variables given. */
  env: Record<string, string>;
  /** `flagtrail …args` in this process with `env` (and `more` variables over it). */
  cli(args: readonly string[], more?: Record<string, string>): Promise<CliResult>;
  /** `sync --since <since> --quiet --no-entities` (the last two days by default), which must pass. */
  sync(since?: string): Promise<void>;
  /** A change to `name` by the console API (now by default) appended to the history: its record id. */
  plant(name: string, at?: number): string;
  /** Closes the simulator and the receiver. */
  close(): Promise<void>;
}

export interface SinkScenarioOptions {
  /** The simulator's history: `records` over `days` (5 by default), in UTC. */
  records: number;
  days?: number;
  /** Started by the test; its url goes to `sinks`, and the scenario closes it. */
  receiver: { url: string; close(): Promise<void> };
  controls: readonly unknown[];
  sinks(url: string): unknown[];
  /** More variables for the CLI (a sink's secret, the signing key). */
  env?: Record<string, string>;
}

export async function sinkScenario(engine: Engine, options: SinkScenarioOptions): Promise<SinkScenario> {
  const { receiver } = options;
  let sim: RunningSimulator | undefined;
  try {
    sim = await startTestSimulator({ records: options.records, days: options.days ?? 5, timeZone: "UTC" });
    const store = await testStore(engine);
    const config = store.config({ controls: options.controls, sinks: options.sinks(receiver.url) });
    return scenarioOn(
      sim,
      store,
      simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config, ...options.env }),
      receiver,
    );
  } catch (error) {
    // Nothing is left listening when the set-up fails half-way: the test's afterAll has no scenario to close.
    await sim?.close();
    await receiver.close();
    throw error;
  }
}

function scenarioOn(
  sim: RunningSimulator,
  store: TestStore,
  env: Record<string, string>,
  receiver: SinkScenarioOptions["receiver"],
): SinkScenario {
  return {
    sim,
    store,
    env,
    cli: (args, more = {}) => runCliInProcess(args, { env: { ...env, ...more } }),
    async sync(since = daysAgo(2)) {
      const sync = await runCliInProcess(["sync", "--since", since, "--quiet", "--no-entities"], { env });
      expect(sync.code, sync.stderr).toBe(0);
    },
    plant: (name, at = sim.control.now()) =>
      sim.control.append([{ at, name, actionType: "gate_update", actor: API }])[0]!.id,
    async close() {
      await sim.close();
      await receiver.close();
    },
  };
}
