// kill -9 during delivery: a spawned `check --notify` is killed while the receiver holds its second
// request open (neither answered nor marked). The alert it had delivered stays delivered; a restart
// delivers the rest, each once, and never the first again.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { type CliOptions, runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";
import { API } from "./plant.ts";

/** A finding's Idempotency-Key: its event id in project default. */
const keyOf = (findingId: string) => `default:finding:${findingId}`;

interface Receiver {
  url: string;
  /** Idempotency-Keys of the requests answered 204, in order. */
  accepted: string[];
  /** The request held open, once one is. */
  held: { key: string; res: ServerResponse } | null;
  /** Answer every request from now on. */
  holdNext: boolean;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: "", accepted: [], held: null, holdNext: false, close: async () => {} };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const key = String(req.headers["idempotency-key"]);
      if (receiver.holdNext && receiver.accepted.length === 1) {
        receiver.held = { key, res };
        return;
      }
      receiver.accepted.push(key);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(ENGINES)("kill -9 during delivery on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let receiver: Receiver;
  let env: Record<string, string>;
  let ids: string[];

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 100, days: 10, timeZone: "UTC" });
    const day = Date.parse(`${daysAgo(2)}T00:00:00Z`);
    ids = [0, 1, 2]
      .map(
        (i) =>
          `ra:${sim.control.append([{ at: day + (10 + i) * 3_600_000, name: `ctl_ra_${i}`, actionType: "gate_update", actor: API }])[0]!.id}`,
      )
      .sort();
    receiver = await startReceiver();
    store = await testStore(engine);
    const config = store.config({
      controls: [
        {
          id: "ra",
          kind: "restricted-actor",
          severity: "high",
          entityPattern: "^ctl_ra_",
          actors: ["CONSOLE API"],
        },
      ],
      sinks: [
        { name: "hook", kind: "webhook", url: receiver.url, secretEnv: "HOOK_SECRET", backoffSeconds: 0 },
      ],
    });
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config, HOOK_SECRET: "whsec-crash-test" });
    // The sync only sets the store up: in this process.
    expect((await runCliInProcess(["sync", "--since", daysAgo(3), "--quiet"], { env })).code).toBe(0);
  });

  afterAll(async () => {
    await sim?.close();
    await receiver?.close();
  });

  /** `check --notify`: spawned when the test kills it (onSpawn), else in this process (the restarts). */
  const notify = (onSpawn?: CliOptions["onSpawn"]) => {
    const args = ["check", "--from", daysAgo(3), "--to", daysAgo(1), "--notify", "--format", "json"];
    return onSpawn ? runCli(args, { env, onSpawn, timeoutMs: 120_000 }) : runCliInProcess(args, { env });
  };

  it("delivers the rest after a restart, each finding once", async () => {
    receiver.holdNext = true;
    const killed = notify((child) => {
      void until(() => receiver.held !== null, "the held request").then(() => child.kill("SIGKILL"));
    });
    const result = await killed;
    expect(result.signal).toBe("SIGKILL");
    expect(receiver.accepted).toEqual([keyOf(ids[0]!)]);
    expect(receiver.held?.key).toBe(keyOf(ids[1]!));
    const rows = await store.query<{ finding_id: string; delivered_at: number | null }>(
      'SELECT finding_id, delivered_at FROM control_outbox ORDER BY finding_id COLLATE "binary"',
    );
    expect(rows.map((r) => [r.finding_id, r.delivered_at !== null])).toEqual([
      [ids[0], true],
      [ids[1], false],
      [ids[2], false],
    ]);

    receiver.holdNext = false;
    receiver.held?.res.destroy();
    const restarted = await notify();
    expect(restarted.code).toBe(1);
    expect(receiver.accepted).toEqual(ids.map(keyOf));
    const after = await store.query<{ delivered_at: number | null }>(
      "SELECT delivered_at FROM control_outbox",
    );
    expect(after.every((r) => r.delivered_at !== null)).toBe(true);
    // Nothing is due any more: a third run sends nothing.
    await notify();
    expect(receiver.accepted).toEqual(ids.map(keyOf));
  }, 240_000);
});
