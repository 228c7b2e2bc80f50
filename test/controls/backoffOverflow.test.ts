// A sink with `backoffSeconds: 0` retries an alert on every run. Its delay was backoffSeconds * 2^attempts:
// from the 1024th failed attempt on, 0 * Infinity = NaN, which the outbox's next_attempt_at (NOT NULL)
// refuses, so every later `check --notify` crashed ("unexpected error") before it could deliver or say
// what waits, for every sink of the project (review h62). A real receiver that refuses (503) on
// 127.0.0.1; the alert sink (webhook) and a SIEM sink (http) both, on both engines.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../helpers/alertReceiver.ts";
import { daysAgo } from "../helpers/simSync.ts";
import { apiChangesTo, type SinkScenario, sinkScenario } from "../sinks/scenario.ts";
import { ENGINES } from "./engines.ts";

describe.each(ENGINES)("an alert retried more than 1023 times on %s", (engine) => {
  let s: SinkScenario;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver("refuse");
    s = await sinkScenario(engine, {
      records: 50,
      receiver,
      controls: [apiChangesTo("ctl_bo_")],
      sinks: (url) => [
        { name: "hook", kind: "webhook", url, secretEnv: "BO_SECRET", backoffSeconds: 0 },
        { name: "siem", kind: "http", url, backoffSeconds: 0, retries: 0 },
      ],
      env: { BO_SECRET: "s" },
    });
    s.plant("ctl_bo_api", s.sim.control.now() - 3_600_000);
    await s.sync();
  });

  afterAll(() => s?.close());

  const notify = () => s.cli(["check", "--notify", "--fail-on", "high", "--from", daysAgo(2)]);

  it("is tried again and said undelivered, not a crash", async () => {
    const first = await notify();
    expect(first.stderr).toMatch(/2 alerts wait undelivered/);
    // The state a sink down for a long while leaves: as many failed attempts as runs.
    await s.store.query("UPDATE control_outbox SET attempts = 1100");
    const tried = receiver.requests.length;
    const later = await notify();
    expect(later.stderr).not.toMatch(/unexpected error/);
    expect(later.stderr).toMatch(/2 alerts wait undelivered/);
    expect(later.code).toBe(1);
    // Both sinks were tried, and each row's next attempt is a time (due at once: no backoff).
    expect(receiver.requests.length).toBe(tried + 2);
    const rows = await s.store.query<{ sink: string; attempts: number; next_attempt_at: number | null }>(
      "SELECT sink, attempts, next_attempt_at FROM control_outbox ORDER BY sink",
    );
    expect(rows.map((r) => [r.sink, Number(r.attempts)])).toEqual([
      ["hook", 1101],
      ["siem", 1101],
    ]);
    for (const r of rows) expect(Number(r.next_attempt_at)).toBeLessThanOrEqual(Date.now());
  });
});
