// A sync refuses to write over a break it would cover (records cut off the end: src/chainChecks.ts), so the
// daemon's cycle fails at every tick. The daemon ran only the freshness controls after a failed sync, so
// the integrity control, the one alert for tampering, stayed silent until a human read the logs. Here a
// store synced once, its newest records deleted behind flagtrail's back, then `daemon --once`: the cycle
// fails (exit 1) and the integrity finding reaches a real receiver, once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../helpers/alertReceiver.ts";
import { daysAgo } from "../helpers/simSync.ts";
import { type SinkScenario, type SinkScenarioOptions, sinkScenario } from "../sinks/scenario.ts";
import { ENGINES } from "./engines.ts";

const LAST = "seq > (SELECT max(seq) - 3 FROM audit_logs)";

/** `controls` over 80 records, their findings sent to `receiver` (a webhook); `env` added. */
const alerting = (
  receiver: Receiver,
  controls: unknown[],
  env: Record<string, string> = {},
): SinkScenarioOptions => ({
  records: 80,
  receiver,
  controls,
  sinks: (url) => [{ name: "hook", kind: "webhook", url, secretEnv: "INT_SECRET" }],
  env: { INT_SECRET: "s", ...env },
});

/** Synced, then its newest records deleted behind flagtrail's back. */
async function syncAndCutTheEnd(s: SinkScenario): Promise<void> {
  await s.sync(daysAgo(6));
  for (const table of ["rule_changes", "rule_diff_summaries", "listed_days", "audit_log_revisions"])
    await s.store.query(
      `DELETE FROM ${table} WHERE audit_log_id IN (SELECT id FROM audit_logs WHERE ${LAST})`,
    );
  await s.store.query(`DELETE FROM audit_logs WHERE ${LAST}`);
}

describe.each(ENGINES)("the daemon after a sync refused over a break on %s", (engine) => {
  let s: SinkScenario;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver("ok");
    s = await sinkScenario(
      engine,
      alerting(receiver, [
        { id: "int", kind: "integrity", severity: "high" },
        { id: "ra", kind: "restricted-actor", severity: "low", actors: ["CONSOLE API"] },
      ]),
    );
    await syncAndCutTheEnd(s);
  });

  afterAll(() => s?.close());

  it("finds the break and alerts it once, and the cycle still fails", async () => {
    s.sim.control.insertAtHead(3);
    for (let tick = 0; tick < 2; tick += 1) {
      const cycle = await s.cli(["daemon", "--once", "--no-entities"]);
      expect(cycle.code).toBe(1);
      expect(cycle.stderr).toMatch(
        /The cycle failed: the chain head recorded in meta .* the sync wrote nothing over it/,
      );
    }
    const findings = await s.store.query<{ id: string }>("SELECT id FROM control_findings");
    expect(findings.map((f) => f.id)).toEqual(["int:verify-meta-head"]);
    expect(receiver.requests.map((r) => r.key)).toEqual(["default:finding:int:verify-meta-head"]);
  });
});

// With FLAGTRAIL_SIGNING_KEY, a truncation with meta's head rewritten to match is refused by its signature
// alone: the daemon's integrity check must run verify with the key too, or it finds nothing.
describe.each(ENGINES)("the daemon after a sync refused over the head's signature on %s", (engine) => {
  let s: SinkScenario;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver("ok");
    s = await sinkScenario(
      engine,
      alerting(receiver, [{ id: "int", kind: "integrity", severity: "high" }], {
        FLAGTRAIL_SIGNING_KEY: "k",
      }),
    );
    await syncAndCutTheEnd(s);
    await s.store.query(
      "UPDATE meta SET value = (SELECT CAST(max(seq) AS TEXT) FROM audit_logs) WHERE key = 'chain_head_seq'",
    );
    await s.store.query(
      "UPDATE meta SET value = (SELECT chain_hash FROM audit_logs ORDER BY seq DESC LIMIT 1) WHERE key = 'chain_head_hash'",
    );
  });

  afterAll(() => s?.close());

  it("checks with the key, finds the break and alerts it once", async () => {
    s.sim.control.insertAtHead(3);
    const cycle = await s.cli(["daemon", "--once", "--no-entities"]);
    expect(cycle.code).toBe(1);
    expect(cycle.stderr).toMatch(/signature does not match .* the sync wrote nothing over it/);
    const findings = await s.store.query<{ id: string }>("SELECT id FROM control_findings");
    expect(findings.map((f) => f.id)).toEqual(["int:verify-head-signature"]);
    expect(receiver.requests.map((r) => r.key)).toEqual(["default:finding:int:verify-head-signature"]);
  });
});
