// A sink with `backoffSeconds: 0` retries an alert on every run. Its delay was backoffSeconds * 2^attempts:
// from the 1024th failed attempt on, 0 * Infinity = NaN, which the outbox's next_attempt_at (NOT NULL)
// refuses, so every later `check --notify` crashed ("unexpected error") before it could deliver or say
// what waits, for every sink of the project (review h62). A real receiver that refuses (503) on
// 127.0.0.1; the alert sink (webhook) and a SIEM sink (http) both, on both engines.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { type Receiver, startReceiver } from "../helpers/alertReceiver.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";
import { API } from "./plant.ts";

describe.each(ENGINES)("an alert retried more than 1023 times on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let receiver: Receiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 50, days: 5, timeZone: "UTC" });
    sim.control.append([
      { at: sim.control.now() - 3_600_000, name: "ctl_bo_api", actionType: "gate_update", actor: API },
    ]);
    receiver = await startReceiver("refuse");
    store = await testStore(engine);
    const config = store.config({
      controls: [
        {
          id: "ra",
          kind: "restricted-actor",
          severity: "low",
          entityPattern: "^ctl_bo_",
          actors: ["CONSOLE API"],
        },
      ],
      sinks: [
        { name: "hook", kind: "webhook", url: receiver.url, secretEnv: "BO_SECRET", backoffSeconds: 0 },
        { name: "siem", kind: "http", url: receiver.url, backoffSeconds: 0, retries: 0 },
      ],
    });
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config, BO_SECRET: "s" });
    const sync = await runCliInProcess(["sync", "--since", daysAgo(2), "--quiet", "--no-entities"], { env });
    expect(sync.code, sync.stderr).toBe(0);
  });

  afterAll(async () => {
    await sim?.close();
    await receiver?.close();
  });

  const notify = () =>
    runCliInProcess(["check", "--notify", "--fail-on", "high", "--from", daysAgo(2)], { env });

  it("is tried again and said undelivered, not a crash", async () => {
    const first = await notify();
    expect(first.stderr).toMatch(/2 alerts wait undelivered/);
    // The state a sink down for a long while leaves: as many failed attempts as runs.
    await store.query("UPDATE control_outbox SET attempts = 1100");
    const tried = receiver.requests.length;
    const later = await notify();
    expect(later.stderr).not.toMatch(/unexpected error/);
    expect(later.stderr).toMatch(/2 alerts wait undelivered/);
    expect(later.code).toBe(1);
    // Both sinks were tried, and each row's next attempt is a time (due at once: no backoff).
    expect(receiver.requests.length).toBe(tried + 2);
    const rows = await store.query<{ sink: string; attempts: number; next_attempt_at: number | null }>(
      "SELECT sink, attempts, next_attempt_at FROM control_outbox ORDER BY sink",
    );
    expect(rows.map((r) => [r.sink, Number(r.attempts)])).toEqual([
      ["hook", 1101],
      ["siem", 1101],
    ]);
    for (const r of rows) expect(Number(r.next_attempt_at)).toBeLessThanOrEqual(Date.now());
  });
});
