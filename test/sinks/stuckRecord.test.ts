// A SIEM sink's records and findings are two streams: a record event the receiver can never take (too
// large alone: 413) stops the records at it, but must not silence the findings, the alerts. The daemon
// (`daemon --once`, its cycle's check and delivery) and `export --sink` sent a sink's findings only
// after all its records went, so while the record stayed no finding ever reached that sink; only
// `check --notify` (findings only) did. A real HTTP receiver on 127.0.0.1 refusing one record event.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { ENGINES, type TestStore, testStore } from "../controls/engines.ts";
import { API } from "../controls/plant.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";

describe.each(ENGINES)("a record event stuck at a sink, on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let server: Server;
  let env: Record<string, string>;
  /** The record event refused (413), and every event id taken, in order. */
  let poison = "";
  const taken: string[] = [];

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 40, days: 5, timeZone: "UTC" });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const ids = Buffer.concat(chunks)
          .toString("utf8")
          .trim()
          .split("\n")
          .map((line) => (JSON.parse(line) as { unmapped: { event_id: string } }).unmapped.event_id);
        if (ids.includes(poison)) {
          res.writeHead(413).end();
          return;
        }
        taken.push(...ids);
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
          entityPattern: "^ctl_st_",
          actors: ["CONSOLE API"],
        },
      ],
      sinks: [
        {
          name: "siem",
          kind: "http",
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`,
          batchSize: 8,
          retries: 0,
          backoffSeconds: 0,
        },
      ],
    });
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config });
    const sync = await runCliInProcess(["sync", "--since", daysAgo(2), "--quiet", "--no-entities"], { env });
    expect(sync.code, sync.stderr).toBe(0);
    const [first] = await store.query<{ id: string }>(
      "SELECT id FROM audit_logs ORDER BY seq LIMIT 1 OFFSET 2",
    );
    poison = `default:${first!.id}`;
  });

  afterAll(async () => {
    await sim?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A change by the restricted actor, now: one new finding. */
  const plant = (name: string) =>
    sim.control.append([{ at: sim.control.now(), name, actionType: "gate_update", actor: API }])[0]!.id;

  const findingsTaken = () => taken.filter((id) => id.includes(":finding:")).sort();

  it("daemon --once: the finding goes, the stuck record is said", async () => {
    const id = plant("ctl_st_daemon");
    const once = await runCliInProcess(["daemon", "--once", "--since", daysAgo(2), "--no-entities"], { env });
    expect(findingsTaken()).toEqual([`default:finding:ra:${id}`]);
    // The records before the stuck one went; the cycle says the sink failed, and why.
    expect(taken.filter((t) => !t.includes(":finding:"))).toHaveLength(2);
    expect(once.stderr).toMatch(
      /"sinksFailed":\[\{"sink":"siem","error":"sink \\"siem\\" did not take the events \(HTTP 413\)\."/,
    );
    const rows = await store.query<{ delivered_at: number | null }>(
      "SELECT delivered_at FROM control_outbox",
    );
    expect(rows.map((r) => r.delivered_at !== null)).toEqual([true]);
  });

  it("export --sink: the new finding goes, then the refusal is the one sentence", async () => {
    const id = plant("ctl_st_export");
    const sync = await runCliInProcess(["sync", "--since", daysAgo(2), "--quiet", "--no-entities"], { env });
    expect(sync.code, sync.stderr).toBe(0);
    const check = await runCliInProcess(["check"], { env });
    expect(check.code, check.stderr).toBe(1);
    const sent = await runCliInProcess(["export", "--sink", "siem"], { env });
    expect(sent.code).toBe(1);
    expect(sent.stderr).toMatch(/did not take the events \(HTTP 413\)/);
    expect(findingsTaken()).toContain(`default:finding:ra:${id}`);
  });
});
