// A sync-freshness control is there for syncs that keep failing. The daemon checked its controls only
// after a cycle whose sync succeeded, which leaves the last sync fresh: the control could never find
// anything there, and a console API down for days raised no finding and no alert (review h62). Here a
// store synced once, its last sync made two days old, then `daemon --once` against an address where
// nothing listens: the cycle fails (exit 1) and the freshness finding reaches a real receiver.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../helpers/alertReceiver.ts";
import { freePort } from "../helpers/ports.ts";
import { type SinkScenario, sinkScenario } from "../sinks/scenario.ts";
import { ENGINES } from "./engines.ts";

const DAY = 86_400_000;

describe.each(ENGINES)("the daemon after a failed sync on %s", (engine) => {
  let s: SinkScenario;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver("ok");
    s = await sinkScenario(engine, {
      records: 50,
      receiver,
      controls: [
        { id: "fresh", kind: "sync-freshness", severity: "high", maxAgeHours: 26 },
        { id: "ra", kind: "restricted-actor", severity: "low", actors: ["CONSOLE API"] },
      ],
      sinks: (url) => [{ name: "hook", kind: "webhook", url, secretEnv: "FR_SECRET" }],
      env: { FR_SECRET: "s" },
    });
    await s.sync();
    // The last successful sync, two days ago.
    await s.store.query("UPDATE sync_runs SET finished_at = finished_at - ?, started_at = started_at - ?", [
      2 * DAY,
      2 * DAY,
    ]);
  });

  afterAll(() => s?.close());

  it("finds the stale sync and alerts it, and the cycle still fails", async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const cycle = await s.cli(["daemon", "--once"], { FLAGTRAIL_BASE_URL: down });
    expect(cycle.code).toBe(1);
    expect(cycle.stderr).toMatch(/The cycle failed/);
    const findings = await s.store.query<{ id: string }>("SELECT id FROM control_findings");
    expect(findings.map((f) => f.id.replace(/:.*/, ""))).toEqual(["fresh"]);
    expect(receiver.requests.map((r) => r.key)).toEqual([`default:finding:${findings[0]!.id}`]);
    // The record controls wait for the records: the next default check still starts where the last one
    // did (none yet: the last 7 days), so a change synced later is not passed over.
    const checks = await s.store.query<{ period_given: number }>("SELECT period_given FROM control_checks");
    expect(checks.map((c) => Number(c.period_given))).toEqual([1]);
  });
});
