// A SIEM sink that refuses its credentials (HTTP 401) refuses every event, the findings too. Going on to
// the findings after such a refusal of the records (as after an event refused alone, stuckRecord.test.ts)
// only marked each finding failed, run after run, its retry put off (backoff doubled, up to an hour): once
// the token was fixed the records went at the next run but the alerts waited. A real HTTP receiver on
// 127.0.0.1 refusing the token, then taking everything.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { ENGINES, type TestStore, testStore } from "../controls/engines.ts";
import { API } from "../controls/plant.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";

describe.each(ENGINES)("a SIEM sink refusing its token, on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let server: Server;
  let env: Record<string, string>;
  let refuse = true;
  const taken: string[] = [];

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 20, days: 5, timeZone: "UTC" });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (refuse) {
          res.writeHead(401).end();
          return;
        }
        const lines = Buffer.concat(chunks).toString("utf8").trim().split("\n");
        taken.push(
          ...lines.map((l) => (JSON.parse(l) as { unmapped: { event_id: string } }).unmapped.event_id),
        );
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    store = await testStore(engine);
    const config = store.config({
      controls: [
        {
          id: "ra",
          kind: "restricted-actor",
          severity: "low",
          entityPattern: "^ctl_tok_",
          actors: ["CONSOLE API"],
        },
      ],
      sinks: [
        {
          name: "siem",
          kind: "http",
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`,
          batchSize: 50,
          retries: 0,
          // A failed alert waits a minute before it is due again.
          backoffSeconds: 60,
        },
      ],
    });
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config });
  });

  afterAll(async () => {
    await sim?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("export --sink: the finding waits untouched while the token is refused, and goes once it is taken", async () => {
    const id = sim.control.append([
      { at: sim.control.now(), name: "ctl_tok_a", actionType: "gate_update", actor: API },
    ])[0]!.id;
    const sync = await runCliInProcess(["sync", "--since", daysAgo(2), "--quiet", "--no-entities"], { env });
    expect(sync.code, sync.stderr).toBe(0);
    const check = await runCliInProcess(["check"], { env });
    expect(check.code, check.stderr).toBe(1);

    const refused = await runCliInProcess(["export", "--sink", "siem"], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('flagtrail: sink "siem" refused its credentials (HTTP 401).\n');
    // Not tried: the refusal was the sink's, not an event's; its retry is not put off.
    const [row] = await store.query<{ attempts: number; last_error: string | null }>(
      "SELECT attempts, last_error FROM control_outbox",
    );
    expect(row).toEqual({ attempts: 0, last_error: null });

    refuse = false;
    const sent = await runCliInProcess(["export", "--sink", "siem"], { env });
    expect(sent.code, sent.stderr).toBe(0);
    expect(taken.filter((t) => t.includes(":finding:"))).toEqual([`default:finding:ra:${id}`]);
    expect(taken.filter((t) => !t.includes(":finding:")).length).toBeGreaterThan(0);
  });
});

// Splunk HEC answers HTTP 400 for an index the token may not write (code 7) or a missing or invalid channel
// (10, 11): a refusal of the sink's settings, every event refused alike, not of these events (code 6,
// invalid data format). A fake collector on 127.0.0.1 refusing the index, then taking everything.
describe.each(ENGINES)("a Splunk HEC sink refused its index (HTTP 400, code 7), on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let server: Server;
  let env: Record<string, string>;
  let refuse = true;
  const taken: string[] = [];

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 20, days: 5, timeZone: "UTC" });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        res.writeHead(refuse ? 400 : 200, { "content-type": "application/json" });
        if (refuse) {
          res.end(JSON.stringify({ text: "Incorrect index", code: 7, "invalid-event-number": 0 }));
          return;
        }
        const text = gunzipSync(Buffer.concat(chunks)).toString("utf8");
        for (const match of text.matchAll(/"flagtrail_id":"([^"]+)"/g)) taken.push(match[1]!);
        res.end(JSON.stringify({ text: "Success", code: 0 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    store = await testStore(engine);
    const config = store.config({
      controls: [
        {
          id: "ra",
          kind: "restricted-actor",
          severity: "low",
          entityPattern: "^ctl_idx_",
          actors: ["CONSOLE API"],
        },
      ],
      sinks: [
        {
          name: "splunk",
          kind: "splunk-hec",
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          tokenEnv: "HEC_TOKEN",
          index: "audit",
          useAck: false,
          retries: 0,
          backoffSeconds: 60,
        },
      ],
    });
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config, HEC_TOKEN: "t0ken" });
  });

  afterAll(async () => {
    await sim?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("export --sink: the finding waits untouched while the index is refused, and goes once it is taken", async () => {
    const id = sim.control.append([
      { at: sim.control.now(), name: "ctl_idx_a", actionType: "gate_update", actor: API },
    ])[0]!.id;
    const sync = await runCliInProcess(["sync", "--since", daysAgo(2), "--quiet", "--no-entities"], { env });
    expect(sync.code, sync.stderr).toBe(0);
    expect((await runCliInProcess(["check"], { env })).code).toBe(1);

    const refused = await runCliInProcess(["export", "--sink", "splunk"], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'flagtrail: sink "splunk" did not take the events (HTTP 400, Incorrect index, code 7).\n',
    );
    const [row] = await store.query<{ attempts: number }>("SELECT attempts FROM control_outbox");
    expect(row?.attempts).toBe(0);

    refuse = false;
    const sent = await runCliInProcess(["export", "--sink", "splunk"], { env });
    expect(sent.code, sent.stderr).toBe(0);
    expect(taken.filter((t) => t.includes(":finding:"))).toEqual([`default:finding:ra:${id}`]);
  });
});
