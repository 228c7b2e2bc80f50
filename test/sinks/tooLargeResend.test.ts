// A batch refused as too large (413) goes in halves; an event too large on its own stops the sink. The
// halves before it were acknowledged, yet the cursor stayed before the whole batch (and every finding of
// the batch was marked failed): each run sent them again, and again, for as long as that event stays
// (review h62). A real HTTP receiver on 127.0.0.1 that refuses (413) any request holding one chosen
// event; `export --sink` twice; each event before it must arrive once. Records and findings.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINES } from "../controls/engines.ts";
import { daysAgo } from "../helpers/simSync.ts";
import { eventIds, startIntake } from "./receivers.ts";
import { apiChangesTo, type SinkScenario, sinkScenario } from "./scenario.ts";

describe.each(ENGINES)("an event too large alone, after acknowledged halves, on %s", (engine) => {
  let s: SinkScenario;
  /** Per path (/rec, /fnd): the event id refused, and every event id taken, in order. */
  const poison = new Map<string, string>();
  const taken = new Map<string, string[]>([
    ["/rec", []],
    ["/fnd", []],
  ]);

  beforeAll(async () => {
    const sink = (name: string, url: string) => ({
      name,
      kind: "http",
      url,
      batchSize: 8,
      retries: 0,
      backoffSeconds: 0,
    });
    s = await sinkScenario(engine, {
      records: 40,
      receiver: await startIntake(({ path, text }) => {
        const ids = eventIds(text);
        if (ids.includes(poison.get(path) ?? "")) return 413;
        taken.get(path)!.push(...ids);
        return 200;
      }),
      controls: [apiChangesTo("ctl_tl_")],
      sinks: (url) => [sink("rec", `${url}/rec`), sink("fnd", `${url}/fnd`)],
    });
    const at = s.sim.control.now() - 3_600_000;
    for (let i = 0; i < 4; i += 1) s.plant(`ctl_tl_${i}`, at + i * 1000);
    await s.sync();
    const check = await s.cli(["check", "--from", daysAgo(2)]);
    expect(check.code, check.stderr).toBe(1);
  });

  afterAll(() => s?.close());

  const twice = async (name: string) => {
    for (let run = 0; run < 2; run += 1) {
      const sent = await s.cli(["export", "--sink", name]);
      expect(sent.stderr).toMatch(/did not take the events \(HTTP 413\)/);
    }
  };

  it("records: the cursor moves past the acknowledged ones, none is sent twice", async () => {
    const ids = (await s.store.query<{ id: string }>("SELECT id FROM audit_logs ORDER BY seq")).map(
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
      await s.store.query<{ finding_id: string }>(
        "SELECT finding_id FROM control_outbox WHERE sink = 'fnd' ORDER BY created_at, finding_id COLLATE \"binary\"",
      )
    ).map((r) => `default:finding:${r.finding_id}`);
    expect(findings).toHaveLength(4);
    poison.set("/fnd", findings[2]!);
    await twice("fnd");
    expect(taken.get("/fnd")!.filter((id) => id.includes(":finding:"))).toEqual(findings.slice(0, 2));
    const rows = await s.store.query<{ finding_id: string; delivered_at: number | null }>(
      "SELECT finding_id, delivered_at FROM control_outbox WHERE sink = 'fnd' ORDER BY created_at, finding_id COLLATE \"binary\"",
    );
    expect(rows.map((r) => r.delivered_at !== null)).toEqual([true, true, false, false]);
  });
});
