// A batch refused as too large (413) goes in halves; an event too large on its own stops the sink. The
// halves before it were acknowledged, yet the cursor stayed before the whole batch (and every finding of
// the batch was marked failed): each run sent them again, and again, for as long as that event stays
// (review h62). A real HTTP receiver on 127.0.0.1 that refuses (413) any request holding one chosen
// event; `export --sink` twice; each event before it must arrive once. Records and findings.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.ts";
import { ENGINES, type TestStore, testStore } from "../controls/engines.ts";
import { API } from "../controls/plant.ts";
import { runCliInProcess } from "../helpers/inProcessCli.ts";
import { daysAgo, simEnv, startTestSimulator } from "../helpers/simSync.ts";

describe.each(ENGINES)("an event too large alone, after acknowledged halves, on %s", (engine) => {
  let sim: RunningSimulator;
  let store: TestStore;
  let server: Server;
  let env: Record<string, string>;
  /** Per path (/rec, /fnd): the event id refused, and every event id taken, in order. */
  const poison = new Map<string, string>();
  const taken = new Map<string, string[]>([
    ["/rec", []],
    ["/fnd", []],
  ]);

  beforeAll(async () => {
    sim = await startTestSimulator({ records: 40, days: 5, timeZone: "UTC" });
    const at = sim.control.now() - 3_600_000;
    for (let i = 0; i < 4; i += 1)
      sim.control.append([{ at: at + i * 1000, name: `ctl_tl_${i}`, actionType: "gate_update", actor: API }]);
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const ids = Buffer.concat(chunks)
          .toString("utf8")
          .trim()
          .split("\n")
          .map((line) => (JSON.parse(line) as { unmapped: { event_id: string } }).unmapped.event_id);
        if (ids.includes(poison.get(req.url!) ?? "")) {
          res.writeHead(413).end();
          return;
        }
        taken.get(req.url!)!.push(...ids);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    store = await testStore(engine);
    const sink = (name: string, path: string) => ({
      name,
      kind: "http",
      url: `${url}${path}`,
      batchSize: 8,
      retries: 0,
      backoffSeconds: 0,
    });
    const config = store.config({
      controls: [
        {
          id: "ra",
          kind: "restricted-actor",
          severity: "low",
          entityPattern: "^ctl_tl_",
          actors: ["CONSOLE API"],
        },
      ],
      sinks: [sink("rec", "/rec"), sink("fnd", "/fnd")],
    });
    env = simEnv(sim, store.db, { FLAGTRAIL_CONFIG: config });
    const sync = await runCliInProcess(["sync", "--since", daysAgo(2), "--quiet", "--no-entities"], { env });
    expect(sync.code, sync.stderr).toBe(0);
    const check = await runCliInProcess(["check", "--from", daysAgo(2)], { env });
    expect(check.code, check.stderr).toBe(1);
  });

  afterAll(async () => {
    await sim?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const twice = async (name: string) => {
    for (let run = 0; run < 2; run += 1) {
      const sent = await runCliInProcess(["export", "--sink", name], { env });
      expect(sent.stderr).toMatch(/did not take the events \(HTTP 413\)/);
    }
  };

  it("records: the cursor moves past the acknowledged ones, none is sent twice", async () => {
    const ids = (await store.query<{ id: string }>("SELECT id FROM audit_logs ORDER BY seq")).map(
      (r) => `default:${r.id}`,
    );
    // The sixth event of the first batch of eight: its first half and the event before it go.
    poison.set("/rec", ids[5]!);
    await twice("rec");
    expect(taken.get("/rec")!.filter((id) => !id.includes(":finding:"))).toEqual(ids.slice(0, 5));
    // The stuck record holds back none of the sink's findings (test/sinks/stuckRecord.test.ts): each once.
    const findings = taken.get("/rec")!.filter((id) => id.includes(":finding:"));
    expect(findings).toHaveLength(4);
    expect(new Set(findings).size).toBe(4);
  });

  it("findings: the acknowledged ones are marked delivered, none is sent twice", async () => {
    // Records all go (their poison is another path's): then the four findings, the third refused.
    const findings = (
      await store.query<{ finding_id: string }>(
        "SELECT finding_id FROM control_outbox WHERE sink = 'fnd' ORDER BY created_at, finding_id COLLATE \"binary\"",
      )
    ).map((r) => `default:finding:${r.finding_id}`);
    expect(findings).toHaveLength(4);
    poison.set("/fnd", findings[2]!);
    await twice("fnd");
    expect(taken.get("/fnd")!.filter((id) => id.includes(":finding:"))).toEqual(findings.slice(0, 2));
    const rows = await store.query<{ finding_id: string; delivered_at: number | null }>(
      "SELECT finding_id, delivered_at FROM control_outbox WHERE sink = 'fnd' ORDER BY created_at, finding_id COLLATE \"binary\"",
    );
    expect(rows.map((r) => r.delivered_at !== null)).toEqual([true, true, false, false]);
  });
});
