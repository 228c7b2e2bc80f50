// `check --notify`: new findings reach a webhook through the outbox, signed, once. A real HTTP receiver
// on 127.0.0.1 checks each request's HMAC; while it answers 503 nothing is marked delivered, and once it
// is up every finding arrives exactly once, under its event id (`default:finding:<finding id>`) as
// Idempotency-Key. The file's first
// call of each command is spawned (end to end); the others, on either engine, and the syncs that set the
// stores up, run the CLI in this process.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { runCli } from "../helpers/runCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";
import { ENGINES, type TestStore, testStore } from "./engines.ts";
import { API, BOT } from "./plant.ts";

const SECRET = "whsec-test-5f1c0a9e";

/** A finding's Idempotency-Key: its event id in project default. */
const keyOf = (findingId: string) => `default:finding:${findingId}`;

interface Receiver {
  url: string;
  up: boolean;
  /** Every request: its key, and whether its signature held. */
  requests: { key: string; signed: boolean }[];
  /** Bodies accepted (2xx), by Idempotency-Key. */
  accepted: Map<string, unknown[]>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { up: false, requests: [], accepted: new Map() } as unknown as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const timestamp = String(req.headers["flagtrail-timestamp"] ?? "");
      const given = Buffer.from(String(req.headers["flagtrail-signature"] ?? ""));
      const expected = Buffer.from(
        `sha256=${createHmac("sha256", SECRET).update(`${timestamp}.${body}`).digest("hex")}`,
      );
      const signed = given.length === expected.length && timingSafeEqual(given, expected);
      const key = String(req.headers["idempotency-key"] ?? "");
      receiver.requests.push({ key, signed });
      if (!receiver.up || !signed) {
        res.writeHead(receiver.up ? 401 : 503).end();
        return;
      }
      receiver.accepted.set(key, [...(receiver.accepted.get(key) ?? []), JSON.parse(body)]);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/flagtrail`;
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}

/** Whether the file's spawned `check --notify` has run (on the first engine). */
let notifySpawned = false;

describe.each(ENGINES)("check --notify on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let receiver: Receiver;
  let env: Record<string, string>;
  let planted: string[];

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 100, days: 10, timeZone: "UTC" });
    const day = Date.parse(`${daysAgo(2)}T00:00:00Z`);
    planted = [API, BOT].map(
      (who, i) =>
        sim.control.append([
          { at: day + (10 + i) * 3_600_000, name: `ctl_ra_${i}`, actionType: "gate_update", actor: who },
        ])[0]!.id,
    );
    receiver = await startReceiver();
    store = await testStore(engine);
    const config = (backoffSeconds: number, name: string) =>
      store.config(
        {
          controls: [
            {
              id: "ra",
              kind: "restricted-actor",
              severity: "high",
              entityPattern: "^ctl_ra_",
              actors: ["CONSOLE API", BOT.id],
            },
          ],
          sinks: [
            { name: "hook", kind: "webhook", url: receiver.url, secretEnv: "HOOK_SECRET", backoffSeconds },
          ],
        },
        name,
      );
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config(0, "now.json"), HOOK_SECRET: SECRET });
    env.SLOW_CONFIG = config(3600, "slow.json");
    const sync = await runCliInProcess(["sync", "--since", daysAgo(3), "--quiet"], { env });
    expect(sync.code).toBe(0);
  });

  afterAll(async () => {
    await sim?.close();
    await receiver?.close();
  });

  /** `check --notify`: the file's first call spawned, the rest in this process. */
  const notify = (config = env.FLAGTRAIL_CONFIG!) => {
    const run = notifySpawned ? runCliInProcess : runCli;
    notifySpawned = true;
    return run(["check", "--from", daysAgo(3), "--to", daysAgo(1), "--notify", "--format", "json"], {
      env: { ...env, FLAGTRAIL_CONFIG: config },
    });
  };

  const outbox = () =>
    store.query<{
      finding_id: string;
      attempts: number;
      delivered_at: number | null;
      last_error: string | null;
    }>(
      'SELECT finding_id, attempts, delivered_at, last_error FROM control_outbox ORDER BY finding_id COLLATE "binary"',
    );

  it("keeps alerts while the receiver is down, backs off, then delivers each finding once", async () => {
    const ids = planted.map((id) => `ra:${id}`).sort();
    for (let run = 1; run <= 3; run += 1) {
      const result = await notify();
      expect(result.code).toBe(1);
      // h42: the one sentence says the findings and the alerts waiting (both engines' outbox count).
      expect(result.stderr).toMatch(
        /, and 2 alerts wait undelivered in the outbox for sink "hook" \(HTTP 503\);/,
      );
      const rows = await outbox();
      expect(rows.map((r) => r.finding_id).sort()).toEqual(ids);
      for (const r of rows) {
        expect(Number(r.attempts)).toBe(run);
        expect(r.delivered_at).toBeNull();
        expect(r.last_error).toBe("HTTP 503");
      }
    }
    // A 503 is the receiver's as a whole: one request per run, the other alert marked with it unsent.
    expect(receiver.requests).toHaveLength(3);
    expect(receiver.requests.every((r) => r.signed)).toBe(true);
    // With a backoff of an hour (doubled per attempt, capped at an hour), a failure moves the next
    // attempt an hour on, and the run after leaves them alone.
    const slowStart = Date.now();
    await notify(env.SLOW_CONFIG);
    expect(receiver.requests).toHaveLength(4);
    const next = await store.query<{ next_attempt_at: number }>("SELECT next_attempt_at FROM control_outbox");
    for (const r of next) expect(Number(r.next_attempt_at)).toBeGreaterThanOrEqual(slowStart + 3_600_000);
    await notify(env.SLOW_CONFIG);
    expect(receiver.requests).toHaveLength(4);
    await store.query("UPDATE control_outbox SET next_attempt_at = ?", [Date.now() - 1]);

    receiver.up = true;
    const delivered = await notify();
    expect(delivered.code).toBe(1);
    expect([...receiver.accepted.keys()].sort()).toEqual(ids.map(keyOf));
    for (const id of ids) {
      const bodies = receiver.accepted.get(keyOf(id))!;
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toMatchObject({
        event: "finding",
        finding: {
          id,
          control: "ra",
          kind: "restricted-actor",
          severity: "high",
          project: "default",
          waiver: null,
        },
      });
    }
    for (const r of await outbox()) expect(r.delivered_at).not.toBeNull();
    expect(delivered.stderr).not.toContain("undelivered");
    // Later runs: nothing new, nothing sent again.
    await notify();
    expect(receiver.requests).toHaveLength(6);
    for (const bodies of receiver.accepted.values()) expect(bodies).toHaveLength(1);
    expect(delivered.stdout + delivered.stderr).not.toContain(SECRET);
    const everything = await store.query<Record<string, unknown>>("SELECT * FROM control_outbox");
    expect(JSON.stringify(everything)).not.toContain(SECRET);
  });

  it("a new finding later is delivered on its own, once", async () => {
    sim.control.append([
      {
        at: Date.parse(`${daysAgo(1)}T09:00:00Z`),
        name: "ctl_ra_late",
        actionType: "gate_update",
        actor: API,
      },
    ]);
    expect((await runCliInProcess(["sync", "--quiet"], { env })).code).toBe(0);
    const before = receiver.requests.length;
    await notify();
    expect(receiver.requests.length).toBe(before + 1);
    expect(receiver.accepted.size).toBe(3);
    await notify();
    expect(receiver.requests.length).toBe(before + 1);
  });
});

describe.each(ENGINES)("daemon cycles check and deliver on %s", (engine) => {
  let sim: RunningSimulator;
  let receiver: Receiver;

  afterAll(async () => {
    await sim?.close();
    await receiver?.close();
  });

  it("a receiver down for three cycles, then up, gets every finding once", async () => {
    sim = await startTestSimulator({ records: 100, days: 10, timeZone: "UTC" });
    // Within the first check's default period (the last 7 days).
    const at = Date.now() - 2 * 86_400_000;
    const ids = [API, BOT].map(
      (who, i) =>
        sim.control.append([
          { at: at + i * 60_000, name: `ctl_ra_d${i}`, actionType: "gate_update", actor: who },
        ])[0]!.id,
    );
    receiver = await startReceiver();
    const store = await testStore(engine);
    const config = store.config({
      controls: [
        {
          id: "ra",
          kind: "restricted-actor",
          severity: "high",
          entityPattern: "^ctl_ra_d",
          actors: ["CONSOLE API", BOT.id],
        },
      ],
      sinks: [
        { name: "hook", kind: "webhook", url: receiver.url, secretEnv: "HOOK_SECRET", backoffSeconds: 0 },
      ],
    });
    const env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config, HOOK_SECRET: SECRET });
    // The first cycle on the first engine spawned, the rest in this process.
    const cycle = (run = runCliInProcess) => run(["daemon", "--once", "--since", daysAgo(3)], { env });
    for (let n = 1; n <= 3; n += 1) {
      const result = await cycle(n === 1 && engine === ENGINES[0] ? runCli : runCliInProcess);
      expect(result.code).toBe(0);
      expect(result.stderr).not.toContain(SECRET);
      // One request per cycle: after the 503 the other alert waits unsent, with that error.
      expect(receiver.requests).toHaveLength(n);
      expect(receiver.accepted.size).toBe(0);
    }
    receiver.up = true;
    expect((await cycle()).code).toBe(0);
    expect([...receiver.accepted.keys()].sort()).toEqual(ids.map((id) => keyOf(`ra:${id}`)).sort());
    for (const bodies of receiver.accepted.values()) expect(bodies).toHaveLength(1);
    expect((await cycle()).code).toBe(0);
    expect(receiver.requests).toHaveLength(5);
  });
});
