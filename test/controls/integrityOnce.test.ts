// One act of tampering is one integrity finding, alerted once, for as long as it stays: its id names the
// kind of break and where it is (a record's seq, a table), never verify's counts, which each sync moves
// on. A second, different break is a finding of its own. Real stores, a simulator that keeps adding
// records (some malformed: quarantined), `check --notify` to a loopback webhook.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { type Receiver, startReceiver } from "../helpers/alertReceiver.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";

describe.each(ENGINES)("integrity findings on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let receiver: Receiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    sim = await startTestSimulator({
      records: 120,
      days: 10,
      timeZone: "UTC",
      faults: { malformedRate: 0.2 },
    });
    receiver = await startReceiver("ok");
    store = await testStore(engine);
    const config = store.config({
      controls: [{ id: "int", kind: "integrity", severity: "high" }],
      sinks: [
        { name: "hook", kind: "webhook", url: receiver.url, secretEnv: "HOOK_SECRET", backoffSeconds: 0 },
      ],
    });
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config, HOOK_SECRET: "whsec-integrity-once" });
    await sync();
  });

  afterAll(async () => {
    await sim?.close();
    await receiver?.close();
  });

  async function sync(): Promise<void> {
    const result = await runCliInProcess(["sync", "--since", daysAgo(5), "--quiet", "--no-entities"], {
      env,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  }

  /** New records on the server, some of them malformed; synced. */
  async function moreRecords(): Promise<void> {
    const before = await quarantined();
    for (let round = 0; round < 20 && (await quarantined()) === before; round += 1) {
      sim.control.append(
        Array.from({ length: 10 }, (_, i) => ({ name: `later_${round}_${i}`, actionType: "gate_update" })),
      );
      await sync();
    }
    expect(await quarantined()).toBeGreaterThan(before);
  }

  const quarantined = async () =>
    Number((await store.query<{ n: number }>("SELECT count(*) AS n FROM quarantine"))[0]!.n);

  /** `check --notify`: the integrity findings' ids. */
  async function check(): Promise<string[]> {
    const result = await runCliInProcess(["check", "--notify", "--format", "json"], { env });
    expect(result.stderr).not.toContain("undelivered");
    return (JSON.parse(result.stdout) as { id: string; kind: string }[])
      .filter((f) => f.kind === "integrity")
      .map((f) => f.id);
  }

  /** The Idempotency-Keys the receiver got, one per alert. */
  const alerts = () => receiver.requests.map((r) => r.key);

  it("alerts once per break across syncs, once more for another break", async () => {
    expect(await check()).toEqual([]);
    expect(await quarantined()).toBeGreaterThan(0);
    // A quarantined record removed behind flagtrail's back: verify quotes the row counts.
    await store.query("DELETE FROM quarantine WHERE id = (SELECT min(id) FROM quarantine)");
    const first = await check();
    expect(first).toEqual(["int:verify-quarantine-rows"]);
    expect(alerts()).toEqual([`default:finding:${first[0]}`]);
    for (let sync = 0; sync < 2; sync += 1) {
      await moreRecords();
      expect(await check()).toEqual(first);
    }
    expect(alerts()).toHaveLength(1);

    // Another break: a stored record edited.
    const [victim] = await store.query<{ id: string }>(
      "SELECT id FROM audit_logs ORDER BY seq LIMIT 1 OFFSET 3",
    );
    const edit =
      engine === "sqlite"
        ? "UPDATE audit_logs SET raw_data = json_set(raw_data, '$.changeLog', 'edited behind its back') WHERE id = ?"
        : "UPDATE audit_logs SET change_log = 'edited behind its back' WHERE id = ?";
    await store.query(edit, [victim!.id]);
    const second = await check();
    expect(second).toEqual([expect.stringMatching(/^int:verify-record-4-(hash|column-change_log)$/)]);
    await moreRecords();
    expect(await check()).toEqual(second);
    expect(alerts()).toEqual([`default:finding:${first[0]}`, `default:finding:${second[0]}`]);
  });
});
